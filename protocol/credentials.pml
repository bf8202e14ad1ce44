/*
 * Passkeys (credentials.h): registration, removal and account deletion racing on two
 * verified accounts, 3 clients (clients 0 and 2 on account 0, client 1 on account 1), 2
 * credential ids; account 0 may start with credential 0. No stamp is trusted (STAMPS 0):
 * the guards on the `passkeys` set alone must keep P1-P3. Every interleaving.
 *
 *     spin -run protocol/credentials.pml
 */
#define CREDENTIALS 1
#define NC      0   /* no client of the lock protocol's other operations */
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define STAMPS  0
#define LEGACY  2   /* START_DATA: both accounts verified, with their locks */
#define START_DATA  a_ex[0] = 1; a_ver[0] = 1; a_em[0] = 0; a_un[0] = 0; put_lock(EK(0), 0, NONE, 0); put_lock(UK(0), 0, NONE, 0); \
                    a_ex[1] = 1; a_ver[1] = 1; a_em[1] = 1; a_un[1] = 1; put_lock(EK(1), 1, NONE, 0); put_lock(UK(1), 1, NONE, 0)

#include "model.h"
