/*
 * An account's several addresses (addresses.h): two verified accounts, three clients: a tab
 * of account 0 doing anything twice (an addition and its verification, a removal, a
 * make-primary, a deletion, staff setting an unverified primary), account 1 adding and
 * verifying, and another tab (or staff) of account 0 doing one thing but adding,
 * three addresses (each account's primary, and one both may want). Checks I1 and I2 on the
 * email namespace's locks and what the guards on the sets are for after every step, I3 at
 * the end. No stamp is trusted. Every interleaving.
 *
 *     spin -run protocol/addresses.pml
 */
#define ADDRESSES 1
/* Client 0 (account 0) does anything, twice; client 1 (account 1) adds and verifies; client 2
 * (account 0: another tab, or staff) does one thing but adding. */
#define AD_OPS_OF(i)      ((i) == 2 -> 1 : 2)
#define AD_MAY(i, op)     ((i) == 0 || ((i) == 1 && (op == AD_ADD || op == AD_VERIFY)) || ((i) == 2 && op != AD_ADD && op != AD_VERIFY))
#define NC      0   /* no client of the lock protocol's other operations */
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define STAMPS  0   /* `updated = :read` proves nothing but that the item is there */
#define LEGACY  2   /* START_DATA: nothing but what start_addresses() sets */
#define START_DATA  skip

#include "model.h"
