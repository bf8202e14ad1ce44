/*
 * The session bound (guards.h): two session slots, two logins of one account at once, each
 * taking a slot in its session's transaction, guarded by the slot's holder as read. Checks
 * S2 (no more live sessions than slots) after every step. Every interleaving.
 *
 *     spin -run protocol/slots.pml
 */
#define SLOTS 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
