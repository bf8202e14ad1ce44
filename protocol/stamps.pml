/*
 * accounts.pml without trusting the `updated` stamp: `updated = :read` holds on any item
 * (a stamp is a clock reading, and two servers' clocks can write the same one), with 3
 * emails and 3 usernames, so a stale read can name a value that is neither the current one
 * nor the one asked for. What each guard on a value as read (email, username, the
 * sign-up's deadline, the held lock) is for, the lock invariants must get from that guard
 * alone. 3 clients, 2 accounts, every interleaving.
 *
 *     spin -run protocol/stamps.pml
 */
#define NC      3   /* clients: clients 0 and 2 act on account 0, client 1 on account 1 */
#define OPS     1   /* operations per client */
#define NE      3   /* emails 0, 1, 2 */
#define NU      3   /* usernames 0, 1, 2 */
#define STAMPS  0   /* `updated = :read` proves nothing */
#define LOSSES  0   /* no answer lost (resends.pml loses answers) */
#define TTL     1   /* deadlines pass; TTL deletes expired items, late and one by one */
#define LEGACY  0   /* start from a consistent table: empty, or account 0 verified or unverified */
#define REPAIRS 0   /* no audit repair running */

#include "model.h"
