/*
 * Clock skew within the margin: each client's server reads its own clock when it plans a
 * request (client 1's runs SKEW ahead of the others'), and a request's :now may lag the
 * true clock by STALE before it is sent; a claim is taken only once expires < :now -
 * MARGIN, with MARGIN = SKEW (the staleness needs no margin of its own: a late request on a
 * claim taken meanwhile is refused by its `owner = me` guards, and a retry plans again).
 * The username's skeleton lock is an item of its own, shared by usernames 0 and 1 (mia,
 * rnia). Account 0 signs up unverified and
 * verifies (client 0) while it changes username or is deleted (client 2); account 1 (client
 * 1, the fast clock) signs up, verified or not, and may take account 0's expired claims.
 * I1-I3 hold on the true clock, every interleaving.
 *
 *     spin -run protocol/clocks.pml
 */
#define CLOCKS    1
#define SKELETONS 1
#define SKEW      1
#define STALE     1
#define MARGIN    1   /* = SKEW: enough (with MARGIN 0 two live holders appear) */
#define NC        3
#define NE        1   /* one address: the clocks decide the usernames */
#define ACCOUNT_OF(c)  ((c) == 1 -> 1 : 0)
#define OFF_OF(c)      ((c) == 1 -> SKEW : 0)
#define OPS_OF(c)      ((c) == 0 -> 2 : 1)
#define MAY(c, op)     ((c) == 0 -> (op == OP_SIGNUP_UNVERIFIED || op == OP_VERIFY) : \
                        ((c) == 1 -> (op == OP_SIGNUP || op == OP_SIGNUP_UNVERIFIED) : \
                         (op == OP_CHANGE_USERNAME || op == OP_DELETE)))
#define LOSSES    0
#define TTL       1
#define LEGACY    0   /* start from a consistent table: empty, or account 0 verified or unverified */
#define REPAIRS   0

#include "model.h"
