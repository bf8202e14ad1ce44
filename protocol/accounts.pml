/*
 * Sign-up (verified and unverified), changes of email, username and both, deletion,
 * verification, the verified email change, TTL expiry, lost answers and resends, from an
 * empty table: 3 clients, 2 accounts, 2 emails and 2 usernames, every interleaving.
 *
 *     spin -run protocol/accounts.pml
 */
#define NC      3   /* clients: clients 0 and 2 act on account 0, client 1 on account 1 */
#define OPS     1   /* operations per client */
#define LOSSES  1   /* answers lost in transit (each followed by a resend, same token) */
#define TTL     1   /* deadlines pass; TTL deletes expired items, late and one by one */
#define LEGACY  0   /* start from an empty table */
#define REPAIRS 0   /* no audit repair running */

#include "model.h"
