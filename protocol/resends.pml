/*
 * accounts.pml with answers lost in transit: any two answers (after the transaction
 * committed or not) are lost, and the request is resent with the same ClientRequestToken,
 * which DynamoDB answers without applying it twice when it committed. 2 clients (one per
 * account), 2 emails and 2 usernames, every interleaving.
 *
 *     spin -run protocol/resends.pml
 */
#define NC      2   /* clients: client 0 acts on account 0, client 1 on account 1 */
#define OPS     1   /* operations per client */
#define LOSSES  2   /* answers lost in transit (each followed by a resend, same token) */
#define TTL     1   /* deadlines pass; TTL deletes expired items, late and one by one */
#define LEGACY  0   /* start from a consistent table: empty, or account 0 verified or unverified */
#define REPAIRS 0   /* no audit repair running */

#include "model.h"
