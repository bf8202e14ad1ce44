/*
 * Sign-up (verified and unverified), changes of email, username and both, deletion,
 * verification, the verified email change and TTL expiry, from an
 * empty table, or one holding account 0 (verified, or unverified): 3 clients, 2 accounts,
 * 2 emails and 2 usernames, every interleaving.
 *
 *     spin -run protocol/accounts.pml
 */
#define NC      3   /* clients: clients 0 and 2 act on account 0, client 1 on account 1 */
#define OPS     1   /* operations per client */
#define LOSSES  0   /* no answer lost (resends.pml loses answers) */
#define TTL     1   /* deadlines pass; TTL deletes expired items, late and one by one */
#define LEGACY  0   /* start from a consistent table: empty, or account 0 verified or unverified */
#define REPAIRS 0   /* no audit repair running */

#include "model.h"
