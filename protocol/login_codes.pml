/*
 * Login by a mailed or texted code (codes.h): three confirmations of two browsers' codes
 * race the owner's password change, address change and number change (or removal). Asserts
 * that a code logs in once, and never after the password, the address or the number it was
 * sent under changed. Every interleaving.
 *
 *     spin -run protocol/login_codes.pml
 */
#define LOGIN_CODES 1
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
