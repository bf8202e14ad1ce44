/*
 * The API's refresh tokens (tokens.h): two holders of one refresh token exchange it at once
 * while the owner's password change ends its session. Asserts that it is exchanged at most
 * once, and never after its session ended. Every interleaving.
 *
 *     spin -run protocol/tokens.pml
 */
#define TOKENS 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
