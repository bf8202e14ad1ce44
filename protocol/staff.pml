/*
 * The staff registry and the last-staff rule (guards.h): account 0 active staff, accounts
 * 1 and 2 not staff; three staff members each grant, revoke, deactivate, activate or
 * delete any account at once. Checks L1 (an active staff account is left) and R1 (the
 * registry lists exactly the active staff) after every step. Every interleaving.
 * With LAST_STAFF_BY_COUNT 1 (count the registry, then act unchecked), L1 fails.
 *
 *     spin -run protocol/staff.pml
 */
#define STAFF 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
