/*
 * An account deleted and signed up again under the same id (a sign-up form's token posted
 * again after a delete, had its tombstone not refused it), unverified or verified, while another client acts on what it read
 * before, and the audit repairs the account's email lock: verified and locked, its lock
 * missing, or its lock naming an account that is gone. Stamps prove nothing (STAMPS 0), so
 * only the guards on the values as read tell the new account from the old. Every
 * interleaving.
 *
 *     spin -run protocol/recreated.pml
 */
#define NC      2   /* clients 0 and 1 both act on account 0 */
#define ACCOUNT_OF(c)  0
#define OPS_OF(c)      ((c) == 1 -> 2 : 1)   /* client 1: delete, then sign up again */
#define MAY(c, op)     ((c) == 0 -> (op != OP_SIGNUP && op != OP_SIGNUP_UNVERIFIED && op != OP_TOUCH) : \
                        (op == OP_DELETE || op == OP_SIGNUP || op == OP_SIGNUP_UNVERIFIED))
#define STAMPS  0   /* `updated = :read` proves nothing */
#define TOMBSTONES 0   /* the id comes back: tombstones (which refuse it) are not trusted either */
#define LOSSES  0
#define TTL     0   /* no time passing */
#define REPAIRS 1   /* the audit repairs EMAIL#0 */
#define REPAIR_KEY EK(0)
#define LEGACY  2   /* START_DATA: account 0 verified, email 0 locked, or its lock missing, or
                     * its lock naming account 1, which does not exist */
#define START_DATA \
	a_ex[0] = 1; a_ver[0] = 1; put_lock(UK(0), 0, NONE, 0); \
	if \
	:: put_lock(EK(0), 0, NONE, 0) \
	:: leg_em[0] = 1 \
	:: leg_em[0] = 1; put_lock(EK(0), 1, NONE, 0); l_leg[EK(0)] = 1 \
	fi

#include "model.h"
