/*
 * Idempotency keys (keys.h): one caller sends one key to one operation with a body, its
 * resend, and another body. Asserts that one key never runs the operation for two bodies.
 * Every interleaving.
 *
 *     spin -run protocol/idempotency_keys.pml
 */
#define IDEMPOTENCY 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
