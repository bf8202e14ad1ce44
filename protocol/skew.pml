/*
 * Clock skew beyond the margin (the stated assumption broken): client 1's server runs SKEW
 * ahead while a claim is taken once expires < :now - MARGIN, MARGIN < SKEW. A fast server
 * may then take a username (and its skeleton, shared by usernames 0 and 1) from an
 * unverified sign-up that still lives on the true clock: I1 and I2 may fail for a while.
 * What must hold is that no such breach lasts: counting only lasting (verified) holders,
 * I1 and I2 hold after every step, and I3 at the end. The held locks' `owner = me` guards
 * (the verification's, the change's and deletion's old locks, with their LockNotOwned
 * retry keeping the lock another account took) are what keep it so. Every interleaving.
 *
 *     spin -run protocol/skew.pml
 */
#define CLOCKS    1
#define SKELETONS 1
#define LASTING   1
#define SKEW      2
#define STALE     0
#define MARGIN    1
#define NC        3
#define ACCOUNT_OF(c)  ((c) == 1 -> 1 : 0)
#define OFF_OF(c)      ((c) == 1 -> SKEW : 0)
#define OPS_OF(c)      ((c) == 0 -> 2 : 1)
#define MAY(c, op)     ((c) == 0 -> (op == OP_SIGNUP_UNVERIFIED || op == OP_VERIFY) : \
                        ((c) == 1 -> (op == OP_SIGNUP) : (op == OP_CHANGE_USERNAME || op == OP_DELETE)))
#define LOSSES    0
#define TTL       1
#define LEGACY    0
#define REPAIRS   0

#include "model.h"
