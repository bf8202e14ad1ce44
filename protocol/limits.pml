/*
 * A rate limit a sign-in's transaction checks (guards.h): a limit of 1, two wrong codes and
 * a right one at once. Asserts that a right code signs in only while the wrong ones left
 * guesses. Every interleaving.
 *
 *     spin -run protocol/limits.pml
 */
#define LIMITS 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
