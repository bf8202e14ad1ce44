/*
 * A sign-in sharing its account and credential with deletion, deactivation and the
 * passkey's removal (factors.h): three sign-ins (TOTP, recovery code, passkey), each from a
 * half-login of its own, race the account's deletion or deactivation (each followed by
 * end_sessions' Query and BatchWriteItem) and the passkey's removal. Checks A1 after every
 * step: a session gets in only as a live, active account, and only if the passkey or
 * recovery code it used was still the account's when it committed. Every interleaving.
 *
 *     spin -run protocol/sign_in_races.pml
 */
#define RACES   1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define STAMPS  0   /* `updated = :read` proves nothing but that the item is there */
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
