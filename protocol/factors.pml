/*
 * Second factors' own transactions (factors.h), in one of four scenarios chosen at the
 * start: TOTP enrolment racing a second enrolment, the account's deletion and two uses of
 * one code on servers SKEW apart, while the step's record expires and TTL deletes it (F1,
 * F2); recovery codes regenerated and removed with the app while two sign-ins spend one code
 * (F3); an enrolment keeping a passkey's recovery codes racing that passkey's removal (F3); a
 * reauthentication with a passkey whose counter stays 0, one answer sent twice (F4).
 * No stamp is trusted. Every interleaving.
 *
 *     spin -run protocol/factors.pml
 */
#define FACTORS 1
#define MARGIN  1   /* ACCOUNTS_CLOCK_SKEW_MARGIN (default 300 s) */
#define SKEW    1   /* server 1 and TTL run this far ahead of server 0: within the margin */
#define NC      0
#define REPAIRS 0
#define TTL     0   /* factors.h's Clock passes time and runs TTL on the step record */
#define LOSSES  0
#define STAMPS  0   /* `updated = :read` proves nothing but that the item is there */
#define LEGACY  2   /* START_DATA: nothing but what the scenario starts with */
#define START_DATA  skip

#include "model.h"
