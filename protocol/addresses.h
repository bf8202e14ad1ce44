/*
 * An account's several addresses (issue 37, accounts.addresses), included by model.h, run
 * by addresses.pml (ADDRESSES 1). conditions.tsv lists its guards like the others'.
 *
 * The email namespace (UNIQ#EMAIL#<key>) is shared by the account's primary address
 * (`email`, held while `email_verified`) and its other verified addresses
 * (`email_addresses`, a set-valued unique constraint in the same namespace, each element
 * recorded in `lock_keys`); the addresses added and waiting for their mailed link
 * (`unverified_emails`) hold no lock. Values: 0 and 1 (the accounts' primaries at the
 * start) and 2 (an address both may want); OUT stands for an address outside the model
 * (staff's new unverified primary). Each change is ONE transaction:
 *   add v         Update SET unverified_emails = read + {v} [unverified_emails = read AND
 *                 updated = read], ConditionCheck lock v [attribute_not_exists(PK)]
 *   verify v      Update SET unverified_emails = read - {v}, email_addresses = read + {v}
 *                 [both = read AND updated = read], Put lock v [attribute_not_exists(PK) OR
 *                 expires < :now - margin]
 *   remove v      Update SET (email_addresses or unverified_emails) = read - {v} [that set
 *                 = read AND email, email_verified = read AND updated = read], and for a
 *                 verified v Delete lock v [owner = me OR attribute_not_exists(PK)]
 *   make primary  Update SET email = v, email_addresses = read - {v} + {old primary} [email,
 *                 email_verified, email_addresses = read AND updated = read]; no lock moves
 *   delete        Put the account's tombstone [its values as read: email, email_verified,
 *                 email_addresses], Delete every lock it was read holding [owner = me OR ...]
 *   staff         set an unverified primary: Update SET email = OUT, email_verified = false
 *                 [email = read ...], Delete the old primary's lock (store.set_unverified_email)
 * Every condition on the account is false on a missing item (a comparison) or true
 * (attribute_not_exists of what it reads empty): a tombstone holds none of the attributes.
 * No stamp is trusted (STAMPS 0): the guards on the addresses alone must keep
 *   I1  each address is held by at most one live account (primary verified, or verified other);
 *   I2  every address a live account holds has a lock naming it (after every step);
 *   I3  once every client is done, every lock names a live account holding its address;
 * and what the guards on the sets are for (purpose, at each commit):
 *   an address added and answered success stays listed (waiting, verified or primary) until
 *   a removal or a verification of it commits (no lost update of the sets);
 *   the link of an address removed while it waited verifies nothing (until it is added again);
 *   an address another account holds is refused at its addition (the email check);
 *   a removal never leaves the account without a verified address.
 */

#ifndef ADDRESSES
#define ADDRESSES 0
#endif

#define NV      3   /* addresses 0, 1, 2 */
#define OUT     NV  /* an address outside the model: staff's unverified primary */
#define V_BIT(v)          (1 << (v))
#define MAX_ADDRESSES     3   /* ACCOUNTS_MAX_EMAIL_ADDRESSES, the primary included */

#if ADDRESSES
/* The state, only in the model that runs it (the others' state vectors stay as they were). */
byte ad_pri[NA];    /* email: a value, or OUT */
byte ad_ver[NA];    /* email_addresses: the verified others (bits) */
byte ad_unv[NA];    /* unverified_emails: added, waiting for their link (bits) */
bit  al_ex[NV];     /* the lock of value v exists */
byte al_own[NV];    /* and names this account */
byte ad_told[NA];   /* ghost: additions answered success and not removed or verified since (bits) */
byte ad_gone[NA];   /* ghost: addresses removed while waiting, and not added again since (bits) */
byte ad_done;       /* address clients done */
#endif

#define count_of(m)       (((m) & 1) + (((m) >> 1) & 1) + (((m) >> 2) & 1))
#define has_ver(x, v)     ((ad_ver[x] & V_BIT(v)) != 0)
#define has_unv(x, v)     ((ad_unv[x] & V_BIT(v)) != 0)
#define primary_held(x)   (a_ver[x] && ad_pri[x] != OUT)
/* the account holds address v under the email's namespace (its primary verified, or one of
 * its verified others) */
#define holds_addr(x, v)  (a_live(x) && ((primary_held(x) && ad_pri[x] == (v)) || has_ver(x, v)))
#define listed(x, v)      (ad_pri[x] == (v) || has_ver(x, v) || has_unv(x, v))

/* email_addresses = :read, or attribute_not_exists(email_addresses) when read empty (true on
 * an item that is not there, as in DynamoDB) */
#define set_as_read(field, r)     ((r) == 0 -> (!a_ex[a] || field[a] == 0) : (a_ex[a] && field[a] == (r)))
#define G_ADDRESSES_AS_READ       set_as_read(ad_ver, r_ver)
#define G_UNVERIFIED_AS_READ      set_as_read(ad_unv, r_unv)
#define G_ADDRESS_LOCK_FREE(v)    (!al_ex[v])
#define G_ADDRESS_CHECK_FREE(v)   (!al_ex[v])
/* email = :read and email_verified = :read: one write (staff's) changes both */
#define G_PRIMARY_AS_READ         (a_ex[a] && ad_pri[a] == r_pri && a_ver[a] == r_pv)
#define G_REMOVE_PRIMARY_AS_READ  (a_ex[a] && ad_pri[a] == r_pri && a_ver[a] == r_pv)
#define G_DELETE_ADDRESSES_AS_READ set_as_read(ad_ver, r_ver)

#define AI1_of(v)    (inv_I1 && !(holds_addr(0, v) && holds_addr(1, v)))
#define AI2_at(x, v) (inv_I2 && (!holds_addr(x, v) || (al_ex[v] && al_own[v] == (x))))
#define AI3_of(v)    (inv_I3 && (!al_ex[v] || holds_addr(al_own[v], v)))
#define told_listed(x) (!a_live(x) || (ad_told[x] & ~(ad_unv[x] | ad_ver[x] | (ad_pri[x] != OUT -> V_BIT(ad_pri[x]) : 0))) == 0)

#if ADDRESSES

inline check_addresses() {
	assert(AI1_of(0) && AI1_of(1) && AI1_of(2));
	assert(AI2_at(0, 0) && AI2_at(0, 1) && AI2_at(0, 2) && AI2_at(1, 0) && AI2_at(1, 1) && AI2_at(1, 2));
	purpose(told_listed(0) && told_listed(1))
}

#define AD_ADD     1
#define AD_VERIFY  2
#define AD_REMOVE  3
#define AD_PRIMARY 4
#define AD_DELETE  5
#define AD_STAFF   6

#ifndef AD_CLIENTS
#define AD_CLIENTS 3
#endif
#ifndef AD_OPS_OF
#define AD_OPS_OF(i)      2   /* operations of client i: an addition and then its verification */
#endif
#ifndef AD_ACCOUNT_OF
#define AD_ACCOUNT_OF(i)  ((i) % NA)
#endif
#ifndef AD_MAY
#define AD_MAY(i, op)     1
#endif

inline release_address(x, v) {
	/* the engine's generic release: only a lock naming the account, or none */
	if :: !al_ex[v] || al_own[v] == x -> al_ex[v] = 0; al_own[v] = 0 :: else fi
}

/* A person, a tab or staff on one account: reads it (a consistent GetItem), chooses what to
 * do with one address as the page allows it (accounts.addresses refuses the rest before
 * sending), and sends that one transaction; AD_OPS_OF(i) times. */
proctype AddressClient(byte i) {
	byte a, v, op, n, r_pri, r_ver, r_unv;
	bit r_pv, live;
	bit r_upd = 0;   /* no stamp is trusted: `updated = :read` holds while the item is there */

	a = AD_ACCOUNT_OF(i);
	do
	:: n < AD_OPS_OF(i) ->
		atomic {
			live = a_live(a);
			r_pri = ad_pri[a]; r_pv = a_ver[a]; r_ver = ad_ver[a]; r_unv = ad_unv[a];
			op = 0; v = 0;
			if
			:: live && AD_MAY(i, AD_ADD) && a_ver[a] && ad_pri[a] != 0 && !has_ver(a, 0) && !has_unv(a, 0) && count_of(r_ver | r_unv) + 1 < MAX_ADDRESSES -> op = AD_ADD; v = 0
			:: live && AD_MAY(i, AD_ADD) && a_ver[a] && ad_pri[a] != 1 && !has_ver(a, 1) && !has_unv(a, 1) && count_of(r_ver | r_unv) + 1 < MAX_ADDRESSES -> op = AD_ADD; v = 1
			:: live && AD_MAY(i, AD_ADD) && a_ver[a] && ad_pri[a] != 2 && !has_ver(a, 2) && !has_unv(a, 2) && count_of(r_ver | r_unv) + 1 < MAX_ADDRESSES -> op = AD_ADD; v = 2
			:: live && AD_MAY(i, AD_VERIFY) && has_unv(a, 0) -> op = AD_VERIFY; v = 0
			:: live && AD_MAY(i, AD_VERIFY) && has_unv(a, 1) -> op = AD_VERIFY; v = 1
			:: live && AD_MAY(i, AD_VERIFY) && has_unv(a, 2) -> op = AD_VERIFY; v = 2
			/* removal: never the primary, nor the only verified address */
			:: live && AD_MAY(i, AD_REMOVE) && has_unv(a, 2) -> op = AD_REMOVE; v = 2
			:: live && AD_MAY(i, AD_REMOVE) && has_ver(a, 2) && (primary_held(a) || count_of(r_ver) > 1) -> op = AD_REMOVE; v = 2
			:: live && AD_MAY(i, AD_REMOVE) && has_ver(a, 1 - a) && (primary_held(a) || count_of(r_ver) > 1) -> op = AD_REMOVE; v = 1 - a
			:: live && AD_MAY(i, AD_PRIMARY) && has_ver(a, 2) -> op = AD_PRIMARY; v = 2
			:: live && AD_MAY(i, AD_PRIMARY) && has_ver(a, a) -> op = AD_PRIMARY; v = a
			:: live && AD_MAY(i, AD_DELETE) -> op = AD_DELETE
			:: live && AD_MAY(i, AD_STAFF) && primary_held(a) -> op = AD_STAFF
			:: else -> skip
			fi
		}
		atomic {
			if
			:: op == AD_ADD ->
				if
				:: G_UNVERIFIED_AS_READ && G_CHANGE_UPDATED_AS_READ && G_ADDRESS_CHECK_FREE(v) ->
					purpose(!(al_ex[v] && al_own[v] != a));   /* an address another account holds is refused */
					ad_unv[a] = r_unv | V_BIT(v); ad_told[a] = ad_told[a] | V_BIT(v); ad_gone[a] = ad_gone[a] & ~V_BIT(v)
				:: else -> skip   /* StaleItem, or UniqueViolation: another account holds it */
				fi
			:: op == AD_VERIFY ->
				if
				:: G_UNVERIFIED_AS_READ && G_ADDRESSES_AS_READ && G_CHANGE_UPDATED_AS_READ && G_ADDRESS_LOCK_FREE(v) ->
					purpose((ad_gone[a] & V_BIT(v)) == 0);   /* a removed address's link verifies nothing */
					ad_unv[a] = r_unv & ~V_BIT(v); ad_ver[a] = r_ver | V_BIT(v); al_ex[v] = 1; al_own[v] = a;
					ad_told[a] = ad_told[a] & ~V_BIT(v)
				:: else -> skip   /* StaleItem, or UniqueViolation: another account verified it first */
				fi
			:: op == AD_REMOVE ->
				if
				:: (r_unv & V_BIT(v)) && G_UNVERIFIED_AS_READ && G_REMOVE_PRIMARY_AS_READ && G_CHANGE_UPDATED_AS_READ ->
					ad_unv[a] = r_unv & ~V_BIT(v); ad_told[a] = ad_told[a] & ~V_BIT(v); ad_gone[a] = ad_gone[a] | V_BIT(v)
				:: !(r_unv & V_BIT(v)) && G_ADDRESSES_AS_READ && G_REMOVE_PRIMARY_AS_READ && G_CHANGE_UPDATED_AS_READ ->
					ad_ver[a] = r_ver & ~V_BIT(v); release_address(a, v); ad_told[a] = ad_told[a] & ~V_BIT(v);
					purpose(primary_held(a) || ad_ver[a] != 0)   /* a verified address is left */
				:: else -> skip   /* StaleItem */
				fi
			:: op == AD_PRIMARY ->
				if
				:: G_PRIMARY_AS_READ && G_ADDRESSES_AS_READ && G_CHANGE_UPDATED_AS_READ ->
					if
					:: r_pv && r_pri != OUT -> ad_ver[a] = (r_ver & ~V_BIT(v)) | V_BIT(r_pri)
					:: else -> ad_ver[a] = r_ver & ~V_BIT(v); a_ver[a] = 1   /* the old primary waits again: outside the model */
					fi;
					ad_pri[a] = v
				:: else -> skip
				fi
			:: op == AD_DELETE ->
				/* its other values as read hold (nothing here changes them but staff's, which
				 * G_DELETE_EMAIL_AS_READ covers: email = :read) */
				if
				:: a_ex[a] && ad_pri[a] == r_pri && a_ver[a] == r_pv && G_DELETE_ADDRESSES_AS_READ ->
					if :: r_pv && r_pri != OUT -> release_address(a, r_pri) :: else fi;
					if :: r_ver & V_BIT(0) -> release_address(a, 0) :: else fi;
					if :: r_ver & V_BIT(1) -> release_address(a, 1) :: else fi;
					if :: r_ver & V_BIT(2) -> release_address(a, 2) :: else fi;
					ad_ver[a] = 0; ad_unv[a] = 0; ad_pri[a] = OUT; ad_told[a] = 0;
					drop_account(a); a_tomb[a] = 1
				:: else -> skip
				fi
			:: op == AD_STAFF ->
				/* store.set_unverified_email: email = :read (the primary's lock released) */
				if
				:: a_ex[a] && ad_pri[a] == r_pri && a_ver[a] == r_pv ->
					release_address(a, r_pri); ad_pri[a] = OUT; a_ver[a] = 0
				:: else -> skip
				fi
			:: else -> skip
			fi;
			check_addresses();
			n++
		}
	:: else -> break
	od;
	ad_done++
}

proctype AddressesDone() {
	(ad_done == AD_CLIENTS) ->
	atomic { assert(AI3_of(0) && AI3_of(1) && AI3_of(2)) }
}

/* Accounts 0 and 1 verified, each with its primary (value 0, 1) locked; account 0 may start
 * with value 2 waiting for its link, or verified (its lock naming it). */
inline start_addresses() {
	a_ex[0] = 1; a_ver[0] = 1; ad_pri[0] = 0; al_ex[0] = 1; al_own[0] = 0;
	a_ex[1] = 1; a_ver[1] = 1; ad_pri[1] = 1; al_ex[1] = 1; al_own[1] = 1;
	if
	:: skip
	:: ad_unv[0] = V_BIT(2)
	:: ad_ver[0] = V_BIT(2); al_ex[2] = 1; al_own[2] = 0
	fi;
	check_addresses();
	run AddressesDone();
	gk = 0;
	do
	:: gk < AD_CLIENTS -> run AddressClient(gk); gk++
	:: else -> break
	od;
	gk = 0
}

#endif
