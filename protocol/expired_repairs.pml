/*
 * The audit's transfer and release of a damaged username lock that expires while the
 * repair is on its way (DynamoDB's TTL, or any Put that finds it expired, may then give the
 * key to a new account): a lock naming an account that holds another username, a lock
 * naming nobody, a lock naming an account that is gone. Every interleaving of the
 * repairer, time, and a sign-up of each account.
 *
 *     spin -run protocol/expired_repairs.pml
 */
#define NC      2   /* client 0 signs account 0 up, client 1 account 1 */
#define ACCOUNT_OF(c)  (c)
#define MAY(c, op)     (op == OP_SIGNUP || op == OP_SIGNUP_UNVERIFIED)
#define LOSSES  0
#define TTL     1   /* deadlines pass; TTL deletes expired items, late and one by one */
#define REPAIRS 1   /* the audit repairs HANDLE#0 */
#define REPAIR_KEY UK(0)
#define LEGACY  2   /* START_DATA: HANDLE#0, expiring with account 1's deadline, names
                     * account 1 (verified, username 1); or nobody while account 0 holds
                     * username 0; or account 1, gone, while account 0 holds username 0 */
#define START_DATA \
	if \
	:: a_ex[1] = 1; a_ver[1] = 1; a_un[1] = 1; a_em[1] = 1; put_lock(EK(1), 1, NONE, 0); put_lock(UK(1), 1, NONE, 0); \
	   l_ex[UK(0)] = 1; l_own[UK(0)] = 1; l_exp[UK(0)] = SET; l_dl[UK(0)] = 1; l_leg[UK(0)] = 1 \
	:: a_ex[0] = 1; a_ver[0] = 1; leg_un[0] = 1; put_lock(EK(0), 0, NONE, 0); \
	   l_ex[UK(0)] = 1; l_own[UK(0)] = NOBODY; l_exp[UK(0)] = SET; l_dl[UK(0)] = 1; l_leg[UK(0)] = 1 \
	:: a_ex[0] = 1; a_ver[0] = 1; leg_un[0] = 1; put_lock(EK(0), 0, NONE, 0); \
	   l_ex[UK(0)] = 1; l_own[UK(0)] = 1; l_exp[UK(0)] = SET; l_dl[UK(0)] = 1; l_leg[UK(0)] = 1 \
	fi

#include "model.h"
