/*
 * The staff hierarchy (guards.h): account 0, a superuser's or not; staff member 1, a
 * superuser, and staff member 2, not, each change it once while account 0 is made a
 * superuser's and staff member 1 is demoted. Checks H1 (a change of a superuser's account
 * commits only by an active staff superuser) after every step. Every interleaving.
 *
 *     spin -run protocol/hierarchy.pml
 */
#define HIERARCHY 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
