/*
 * Sessions (sessions.h): 2 browsers log in to one account, load, save and log out, while a
 * password change ends every session and sessions expire; anyone may hold a copy of a
 * cookie. Checks S1 after every step: a cookie gets in only as the login that made its
 * session, and never once that session ended. Every interleaving.
 *
 *     spin -run protocol/sessions.pml
 */
#define SESSIONS 1
#define NC      0   /* no client of the lock protocol */
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: the account, verified, with its locks */
#define START_DATA  a_ex[0] = 1; a_ver[0] = 1; put_lock(EK(0), 0, NONE, 0); put_lock(UK(0), 0, NONE, 0)

#include "model.h"
