/*
 * The audit's repairs (claim, transfer, release, as accounts_audit --repair, the staff lock
 * page and accounts_backfill send them) racing 2 clients on legacy data: a duplicate email,
 * a missing lock, an orphaned lock and a lock naming the wrong owner. Every interleaving.
 *
 *     spin -run protocol/repair.pml
 */
#define NC      2   /* clients: client 0 acts on account 0, client 1 on account 1; with the
                     * repairer, 3 actors */
#define OPS     1   /* operations per client */
#define LOSSES  1   /* answers lost in transit (each followed by a resend, same token) */
#define TTL     0   /* no time passing (accounts.pml covers expiry) */
#define LEGACY  1   /* start from legacy data */
#define REPAIRS 1   /* one lock key examined and repaired, read item by item */

#include "model.h"
