/*
 * The OpenID Connect identity lock, UNIQ#OIDC#<issuer>#<subject> (factors.h): a first
 * sign-in with a provider creating account 1 with identity 0, while two tabs of account 0
 * (holding identity 1, or none) link, unlink or delete it. The identities' rows share the
 * passkeys' guards (the same shape: a set as read, one lock per element); this model runs
 * processes of their own. Checks I1 and I2 on the identity locks after every step, I3 at
 * the end. Or one ID token an app posts twice, on servers SKEW apart, while its record
 * expires and TTL deletes it: T1, accepted once. No stamp is trusted. Every interleaving.
 *
 *     spin -run protocol/identities.pml
 */
#define IDENTITIES 1
#define MARGIN  1   /* ACCOUNTS_CLOCK_SKEW_MARGIN (default 300 s) */
#define SKEW    1   /* server 1 and TTL run this far ahead of server 0: within the margin */
#define NC      0
#define REPAIRS 0
#define TTL     0
#define LOSSES  0
#define STAMPS  0   /* `updated = :read` proves nothing but that the item is there */
#define LEGACY  2   /* START_DATA: nothing but what the model starts with */
#define START_DATA  skip

#include "model.h"
