/*
 * The single-use writes of a sign-in with a second factor (credentials.h): two sign-ins
 * from one half-login, two half-logins with one TOTP code and with one recovery code, a
 * passkey and its clone with counters 1 and 2. Every interleaving.
 *
 *     spin -run protocol/sign_in.pml
 */
#define SIGN_IN 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the sign-ins start with */
#define START_DATA  skip

#include "model.h"
