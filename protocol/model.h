/*
 * The lock protocol of django-dynamo-accounts as a Promela model: the state, every
 * transaction the engine sends, the repairs, time, and the invariants. Included by the
 * runnable models (the *.pml files), which set the bounds first; see README.md.
 *
 * One table: account items (exists, email, username, verified, expires, updated stamp,
 * pending email change) and lock items (exists, owner, expires). Every TransactWriteItems
 * the engine sends is ONE atomic step whose conditions are the guard macros G_* below,
 * one macro per conjunct of a ConditionExpression (conjuncts one write always changes
 * together share one, see README.md): conditions.tsv lists them, transaction
 * by transaction; tests/protocol/test_protocol_drift.py compares that table with the requests the
 * code builds and with this file, and tests/protocol/test_protocol_model.py removes each guard in
 * turn (redefines it as 1) and asserts that Spin finds a counter-example.
 *
 * Passkeys and the single-use writes of a sign-in are credentials.h's (included below); the
 * second factors' own transactions, a sign-in racing deletion, and the identity lock factors.h's;
 * a mailed login code's sign-in codes.h's; an idempotency key's claim keys.h's.
 *
 * Invariants (named as in the README and protocol/README.md); "live" = exists and not
 * expired (on the true clock), and only a verified account holds its email under the
 * (partial) email constraint:
 *   I1  each lock key has at most one live owner: at most one live item holds its value;
 *   I2  every value a live item holds is locked by that item (a live lock naming it);
 *   I3  once activity stops, no lock is left without a live owner holding its value.
 * I1 and I2 are asserted after every step, I3 once every client and repairer is done.
 * Legacy data (see legacy_data) is exempt until a transaction first puts it in order.
 * Every other assertion says what a guard is for (purpose()), or restates a guard
 * (restating()); tests/protocol/test_protocol_model.py reports which kind each guard's
 * counter-example trips, and counts only the invariants and the purposes.
 */

/* ---- bounds ---- */
#define NA      2   /* account ids (a sign-up picks one: generated, or derived from a form token) */
#ifndef NE
#define NE      2   /* emails: 0, 1 (or 0, 1, 2) */
#endif
#ifndef NU
#define NU      2   /* usernames: 0, 1 (or 0, 1, 2) */
#endif
#if SKELETONS
#define NSK     (NU - 1)    /* skeleton keys: usernames 0 and 1 share skeleton 0, username 2 has 1 */
#else
#define NSK     0
#endif
#define NK      (NE + NU + NSK)   /* lock keys: EMAIL#0, EMAIL#1, HANDLE#0, HANDLE#1 (and #2 of a
                                   * field of 3), then HANDLE_SKEL#0 (and #1) */
#ifndef NC
#define NC      3   /* clients: people, staff, tabs; any client may act on any account */
#endif
#ifndef OPS
#define OPS     1   /* operations per client */
#endif
#ifndef LOSSES
#define LOSSES  1   /* answers lost in transit in one run (each followed by a resend) */
#endif
#ifndef REPAIRS
#define REPAIRS 1   /* lock keys the repairer examines and repairs */
#endif
#ifndef TTL
#define TTL     1   /* 1: deadlines pass and TTL deletes expired items */
#endif
#ifndef LEGACY
#define LEGACY  1   /* 0: start from a consistent table (see init); 1: from legacy data;
                     * 2: from the model's own START_DATA */
#endif
#ifndef SESSIONS
#define SESSIONS 0  /* 1: run the sessions of sessions.h (browsers, a password change, time) */
#endif
#ifndef STAMPS
#define STAMPS  1   /* 1: each write stores a new `updated` stamp, and `updated = :read` means
                     * no write since the read; 0: a stamp proves nothing (it is a clock
                     * reading: servers' clocks differ), `updated = :read` holds on any item */
#endif
#ifndef ACCOUNT_OF
#define ACCOUNT_OF(c)   ((c) % NA)   /* the account client c acts on */
#endif
#ifndef OPS_OF
#define OPS_OF(c)       OPS          /* operations of client c */
#endif
#ifndef MAY
#define MAY(c, op)      1            /* whether client c may choose operation op */
#endif
#ifndef VERIFY_SENDS_LOCKS
#define VERIFY_SENDS_LOCKS 1   /* 0: a verification without its lock actions, as plan_change
                                * once sent it (it fails, see README.md); 1: as the code sends it */
#endif
#ifndef TOMBSTONES
#define TOMBSTONES 1   /* 1: a deletion leaves the account's tombstone, which no sign-up can
                        * replace (an id never comes back); 0: an id may be signed up again */
#endif
#ifndef SKELETONS
#define SKELETONS 0    /* 1: the username's skeleton lock (HANDLE_SKEL) is an item of its own,
                        * usernames 0 and 1 sharing one (mia, rnia); 0: it moves with the
                        * HANDLE lock, with the same conditions (distinct skeletons) */
#endif
#ifndef CLOCKS
#define CLOCKS  0      /* 1: each client reads its own clock when it plans (see "clocks") */
#endif
#ifndef OFF_OF
#define OFF_OF(c) 0    /* how far ahead of the true clock client c's clock is */
#endif
#ifndef SKEW
#define SKEW    1      /* the largest OFF_OF */
#endif
#ifndef MARGIN
#define MARGIN  2      /* ACCOUNTS_CLOCK_SKEW_MARGIN: a claim is taken once expires < :now - MARGIN */
#endif
#ifndef STALE
#define STALE   1      /* how old a request's :now may get before it is sent (or resent) */
#endif
#ifndef LASTING
#define LASTING 0      /* 1: I1 and I2 count only lasting (verified) holders: past the margin
                        * assumption a live claim may be taken, but it must never last */
#endif

#define NOBODY  NA  /* a lock that names no owner */
#define EK(v)   (v)
#define UK(v)   (NE + (v))
#define SKEL_OF(v)   ((v) == 0 -> 0 : (v) - 1)
#define SK(v)   (NE + NU + SKEL_OF(v))
#define is_email(k)  ((k) < NE)
#define is_handle(k) ((k) >= NE && (k) < NE + NU)

/* expires: absent, set (in the future), passed (TTL may delete the item any time later) */
#define NONE    0
#define SET     1
#define PASSED  2

/* answers */
#define R_OK        1
#define R_STALE     2   /* StaleItem / ItemAlreadyExists: the item's own condition failed */
#define R_TAKEN     3   /* UniqueViolation: a new lock (or the email check) collided */
#define R_NOT_OWNED 4   /* LockNotOwned: only an old lock's release failed */
#define R_CANCELLED 5   /* anything else cancelled (a kept lock moved, a repair guard) */

/* ---- the table ---- */
bit  a_ex[NA];      /* account item exists */
byte a_em[NA];      /* email */
byte a_un[NA];      /* username */
bit  a_ver[NA];     /* email_verified */
byte a_exp[NA];     /* expires: NONE, SET, PASSED */
byte a_upd[NA];     /* the `updated` stamp (see STAMPS); kept when the item is deleted, so a
                     * re-created item gets a new one */
bit  a_pend[NA];    /* a pending email change (its new address is in the link) */
bit  a_gen[NA];     /* which deadline `expires` holds, as one bit: each unverified sign-up sets a
                     * new one (never reset, so a re-created account's deadline differs) */
bit  a_nonce[NA];   /* its nonce, as one bit (conservative) */
bit  a_tomb[NA];    /* the tombstone a deleted account left at its key */
bit  a_used[NA];    /* (CLOCKS) the id was signed up once: an id comes back only by replaying
                     * its form's token, within minutes, never after its sign-up expired */

bit  l_ex[NK];      /* lock item exists */
byte l_own[NK];     /* owner: an account id or NOBODY */
byte l_exp[NK];     /* expires: NONE, SET, PASSED */
byte l_dl[NK];      /* whose deadline the expires is (the account it was copied from) */
bit  dl_passed[NA]; /* that deadline has passed */

/* ghosts: legacy data, not yet put in order by any transaction */
bit  leg_em[NA];
bit  leg_un[NA];
bit  l_leg[NK];

/* clocks (CLOCKS): rel[d] is the age of account d's deadline on the true clock, biased so
 * that it never goes below 0: the item lives while rel[d] <= BIAS (expires >= now), and a
 * clock OFF ahead reads rel[d] + OFF. A client reads its clock when it plans a request
 * (p_rel: r0, r1), again for each new attempt, never for a resend; plan_rel keeps, for
 * time to respect, how old each pending plan may get (STALE). */
#define BIAS     (SKEW + STALE)
#define REL_MAX  (BIAS + MARGIN + 1)
#define PLANNERS 4
byte rel[NA];
bit  planning[PLANNERS];
byte plan_rel[PLANNERS * NA];

byte losses = LOSSES;
byte finished = 0;
byte gk;    /* a loop index inside atomic steps, always 0 between them */
/* Which assertions are on: 0 the invariants, 1 and what guards are for, 2 and what restates a
 * guard (tests/protocol/test_protocol_model.py switches them; a committed model runs them all). Each
 * kind's text names it (inv_*, asserts < 1, asserts < 2), so a counter-example says which. */
byte asserts = 2;
bit  inv_I1 = 1, inv_I2 = 1, inv_I3 = 1, inv_S1 = 1;
#define purpose(e)    assert(asserts < 1 || (e))
#define restating(e)  assert(asserts < 2 || (e))

#if CLOCKS
#define lives(d)           (rel[d] <= BIAS)
#define a_live(a)          (a_ex[a] && (a_exp[a] == NONE || lives(a)))
#define l_live(k)          (l_ex[k] && (l_exp[k] == NONE || lives(l_dl[k])))
#else
#define a_live(a)          (a_ex[a] && a_exp[a] != PASSED)
#define l_live(k)          (l_ex[k] && l_exp[k] != PASSED)
#endif
#define holds_email(a, v)  (a_live(a) && a_ver[a] && a_em[a] == (v))
#define holds_handle(a, v) (a_live(a) && a_un[a] == (v))
#define holds_skel(a, s)   (a_live(a) && SKEL_OF(a_un[a]) == (s))
#define holds(a, k)        (is_email(k) -> holds_email(a, k) : \
                            (is_handle(k) -> holds_handle(a, (k) - NE) : holds_skel(a, (k) - NE - NU)))
#define legacy(a, k)       (is_email(k) -> leg_em[a] : leg_un[a])
/* LASTING: only a holder whose claim does not expire (verified) counts */
#define protected(a, k)    (holds(a, k) && !legacy(a, k) && (!LASTING || a_exp[a] == NONE))
#define locked_by(a, k)    (l_live(k) && l_own[k] == (a))

#define I1_at(k)  (inv_I1 && !(protected(0, k) && protected(1, k)))
#if SKELETONS
#define I2_of(a)  ((!protected(a, EK(a_em[a])) || locked_by(a, EK(a_em[a]))) && \
                   (!protected(a, UK(a_un[a])) || locked_by(a, UK(a_un[a]))) && \
                   (!protected(a, SK(a_un[a])) || locked_by(a, SK(a_un[a]))))
#else
#define I2_of(a)  ((!protected(a, EK(a_em[a])) || locked_by(a, EK(a_em[a]))) && \
                   (!protected(a, UK(a_un[a])) || locked_by(a, UK(a_un[a]))))
#endif
#define I2        (inv_I2 && I2_of(0) && I2_of(1))
#define I3_at(k)  (inv_I3 && (!l_live(k) || l_leg[k] || (l_own[k] != NOBODY && holds(l_own[k], k))))

/* ---- guards: one macro per conjunct of a ConditionExpression (see conditions.tsv) ----
 * A comparison with an attribute that is not there is false, as in DynamoDB (same()).
 * In a client: a = the account, r_* = the account as read, e/u = new email/username,
 * o_e/o_u = the other owner an old lock named (keep_locks retry).
 * In the repairer: h = holder, o = lock owner as read, v_* = values as read. */

/* A new stamp for account x's next write (store.update_account sets `updated`, a clock). */
#define next_stamp(x)                     (STAMPS -> a_upd[x] + 1 : 0)
#define stamp_as_read(x)                  (a_ex[x] && (!STAMPS || a_upd[x] == r_upd))
/* `name = :read` is false on an item (or attribute) that is not there, as in DynamoDB */
#define same(x, field, value)             (a_ex[x] && field[x] == (value))
/* expires >= :now, sent when the item was read with an expires (read_exp) */
#define unexpired(x, read_exp)            ((read_exp) == NONE || still_set(x))
/* A repair's check of a holder or owner x: its value of key k, its email_verified (email
 * keys), its expires >= :now, as read (transactions.actions.still_as_read) */
#define repair_check(x, v, ver, exp)     (a_ex[x] && value_of(x, k) == (v) && (!is_email(k) || same(x, a_ver, ver)) && unexpired(x, exp))

/* pending_email, pending_nonce as read: `= :read`, or attribute_not_exists when none was */
#define pending_as_read(x)                (r_pend -> (a_ex[x] && a_pend[x] && a_nonce[x] == r_nonce) : !a_pend[x])

#if CLOCKS
/* The request's :now: deadline d's age as its client's clock read it when it planned. */
#define p_rel(d)                          ((d) == 0 -> r0 : r1)
/* Every lock Put: attribute_not_exists(PK) OR expires < :now - margin (a lock expired longer
 * ago than the margin is free, by the request's clock). */
#define lock_free(k)                      (!l_ex[k] || (l_exp[k] == SET && p_rel(l_dl[k]) > BIAS + MARGIN))
/* An item that expires is guarded expires >= :now, by the request's clock. */
#define still_set(x)                      (a_exp[x] == SET && p_rel(x) <= BIAS)
/* A repair's owner gone: attribute_not_exists(PK) OR expires < :now - margin (or a tombstone). */
#define gone(x)                           (!a_ex[x] || (a_exp[x] == SET && p_rel(x) > BIAS + MARGIN))
#else
/* Every lock Put: attribute_not_exists(PK) OR expires < :now - margin (an expired lock is free). */
#define lock_free(k)                      (!l_ex[k] || l_exp[k] == PASSED)
/* An item that expires is guarded expires >= :now: it exists and its deadline has not passed. */
#define still_set(x)                      (a_exp[x] == SET)
#define gone(x)                           (!a_live(x))
#endif

/* transactions.plan_create (ACCOUNTS_EMAIL_VERIFICATION = "none": verified at once) */
/* attribute_not_exists(PK): no account, and no tombstone of one, at the key */
#define G_SIGNUP_ITEM_ABSENT              (!a_ex[a] && !a_tomb[a])
#define G_SIGNUP_EMAIL_LOCK_FREE          lock_free(EK(e))
#define G_SIGNUP_HANDLE_LOCK_FREE(k)      lock_free(k)
/* plan_create of an unverified account: no email lock, a ConditionCheck on it instead */
#define G_SIGNUP_UNVERIFIED_ITEM_ABSENT   (!a_ex[a] && !a_tomb[a])
#define G_SIGNUP_UNVERIFIED_EMAIL_FREE    (!l_ex[EK(e)])
#define G_SIGNUP_UNVERIFIED_HANDLE_FREE(k) lock_free(k)
/* transactions.plan_change (email, username or both; unverified; keep_locks retry) */
#define G_CHANGE_EMAIL_AS_READ            same(a, a_em, r_em)
#define G_CHANGE_VERIFIED_AS_READ         same(a, a_ver, r_ver)
#define G_CHANGE_UPDATED_AS_READ          stamp_as_read(a)
#define G_CHANGE_NEW_LOCK_FREE(k)         lock_free(k)
#define G_CHANGE_OLD_LOCK_MINE(k)         (!l_ex[k] || l_own[k] == a)
#define G_CHANGE_USERNAME_AS_READ         same(a, a_un, r_un)
#define G_CHANGE_ITEM_LIVE                still_set(a)
#define G_CHANGE_EMAIL_FREE               (!l_ex[EK(e)])
#define G_CHANGE_KEPT_LOCK_STILL_OTHER(k, o) (l_ex[k] && l_own[k] == (o))
/* transactions.plan_delete (keep_locks retry) */
#define G_DELETE_EMAIL_AS_READ            same(a, a_em, r_em)
/* email_verified = :read and, on an account that expires, expires > :now: one write (a
 * verification) sets the one and removes the other, so either alone refuses a delete planned
 * before it; they share one guard (removing one alone is caught by the other, see README.md) */
#define G_DELETE_VERIFICATION_AS_READ     (same(a, a_ver, r_ver) && unexpired(a, r_exp))
#define G_DELETE_USERNAME_AS_READ         same(a, a_un, r_un)
#define G_DELETE_OLD_LOCK_MINE(k)         (!l_ex[k] || l_own[k] == a)
#define G_DELETE_KEPT_LOCK_STILL_OTHER(k, o) (l_ex[k] && l_own[k] == (o))
/* verify: store.verify_email -> update_account -> plan_change(email_verified, expires) */
#define G_VERIFY_EMAIL_AS_READ            same(a, a_em, r_em)
/* email_verified = :read (false) and expires = :read: the same sign-up, still waiting (a
 * verified account has no expires, so the first alone adds nothing; one guard) */
#define G_VERIFY_SAME_SIGNUP              (same(a, a_ver, r_ver) && a_exp[a] != NONE && a_gen[a] == r_gen)
#define G_VERIFY_NOT_EXPIRED              still_set(a)
#define G_VERIFY_UPDATED_AS_READ          stamp_as_read(a)
#define G_VERIFY_EMAIL_LOCK_FREE          lock_free(EK(r_em))
#define G_VERIFY_HELD_LOCK_MINE(k)        (l_ex[k] && l_own[k] == a)
/* verified email change: store.request_email_change, then apply_email_change from the link */
/* pending_email, pending_nonce and updated as read: what the request changes, as read (no
 * lost update; the pending fields matter to nothing else, so they share the stamp's guard) */
#define G_REQUEST_AS_READ                 (pending_as_read(a) && stamp_as_read(a))
#define G_REQUEST_NEW_EMAIL_FREE          (!l_ex[EK(e)])
#define G_APPLY_EMAIL_IS_OLD              same(a, a_em, r_em)
/* pending_email, pending_nonce and email_verified as read: only a verified account has a
 * pending change (a request needs one, a re-created account has none): one guard */
#define G_APPLY_PENDING_AS_READ           (pending_as_read(a) && same(a, a_ver, r_ver))
#define G_APPLY_UPDATED_AS_READ           stamp_as_read(a)
#define G_APPLY_NEW_LOCK_FREE             lock_free(EK(e))
#define G_APPLY_OLD_LOCK_MINE             (!l_ex[EK(r_em)] || l_own[EK(r_em)] == a)
#define G_APPLY_KEPT_LOCK_STILL_OTHER(o)  (l_ex[EK(r_em)] && l_own[EK(r_em)] == (o))
/* audit repairs: transactions.plan_claim_lock, plan_transfer_lock, plan_release_lock */
/* The holder's (and owner's) value as read, and expires > :now when it expires: a holder
 * cannot be verified meanwhile (its lock is missing or another's: the verification's
 * held-lock check refuses), and one whose deadline passes gets a lock born expired */
#define G_CLAIM_HOLDER_VALUE_AS_READ      (a_ex[h] && value_of(h, k) == v_h && unexpired(h, exp_h))
#define G_CLAIM_HOLDER_VERIFIED_AS_READ   (!is_email(k) || same(h, a_ver, ver_h))
#define G_CLAIM_LOCK_FREE                 lock_free(k)
/* ... and while the lock exists, no account can come to hold its email unverified (every
 * unverified sign-up and change checks the email lock is absent): email_verified too */
#define G_TRANSFER_HOLDER_AS_READ         repair_check(h, v_h, ver_h, exp_h)
/* The owner still holds what was read (a value that is not this key's): its value, and its
 * email_verified and expires > :now, which cannot change while the lock names it (a
 * verification's email lock Put and its held-lock check need the lock) */
#define G_TRANSFER_OWNER_AS_READ          repair_check(o, v_o, ver_o, exp_o)
#define G_TRANSFER_LOCK_STILL_OWNER       (l_ex[k] && l_own[k] == o)
#define G_TRANSFER_OWNER_GONE             gone(o)
#define G_RELEASE_OWNER_AS_READ           repair_check(o, v_o, ver_o, exp_o)
#define G_RELEASE_LOCK_STILL_OWNER        (l_ex[k] && l_own[k] == o)
#define G_RELEASE_OWNER_GONE              gone(o)

#define value_of(a, k)  (is_email(k) -> a_em[a] : (is_handle(k) -> a_un[a] : SKEL_OF(a_un[a])))

/* ---- steps on the table ---- */

/* After every step: legacy data that a transaction put in order joins the invariants. */
inline settle() {
	gk = 0;
	do
	:: gk < NA ->
		if :: leg_em[gk] && holds_email(gk, a_em[gk]) && locked_by(gk, EK(a_em[gk])) -> leg_em[gk] = 0
		   :: else fi;
		if :: leg_un[gk] && holds_handle(gk, a_un[gk]) && locked_by(gk, UK(a_un[gk])) -> leg_un[gk] = 0
		   :: else fi;
		gk++
	:: else -> break
	od;
	gk = 0;
	do
	:: gk < NK -> assert(I1_at(gk)); gk++
	:: else -> break
	od;
	gk = 0;
	assert(I2)
}

/* A skeleton lock moves only when the skeleton changes (mia -> rnia keeps it). */
#define skel_moves(from, to)  (SKELETONS && SKEL_OF(from) != SKEL_OF(to))

/* What `updated = :read` is for: a change, verification or email change commits only on the
 * account as the client read it (no lost update; a stale form is refused with StaleItem).
 * With stamps that never repeat, equal stamps mean no write since the read. */
#define no_lost_update  restating(!STAMPS || stamp_as_read(a))

inline put_lock(k, owner, expires, deadline) {
	l_ex[k] = 1; l_own[k] = owner; l_exp[k] = (!CLOCKS && expires == SET && dl_passed[deadline] -> PASSED : expires);
	l_dl[k] = (expires == NONE -> 0 : deadline); l_leg[k] = 0
}

inline drop_lock(k) {
	l_ex[k] = 0; l_own[k] = 0; l_exp[k] = NONE; l_dl[k] = 0; l_leg[k] = 0
}

inline drop_account(x) {
	a_ex[x] = 0; a_em[x] = 0; a_un[x] = 0; a_ver[x] = 0; a_exp[x] = NONE;
	a_pend[x] = 0; a_nonce[x] = 0
}

/* ---- the client: one operation at a time, each read, planned, sent ---- */

#define OP_SIGNUP            1
#define OP_SIGNUP_UNVERIFIED 2
#define OP_CHANGE            3
#define OP_DELETE            4
#define OP_VERIFY            5
#define OP_EMAIL_CHANGE      6
#define OP_CHANGE_EMAIL      7   /* what a client may choose (MAY): OP_CHANGE of the email, */
#define OP_CHANGE_USERNAME   8   /* of the username, */
#define OP_CHANGE_BOTH       9   /* of both */
#define OP_TOUCH             10  /* a write no constraint covers (password, name, is_active) */

/* The transaction the client has planned, evaluated atomically: all conditions, then all
 * writes, or nothing and an answer read position by position (cancellation_error). */
inline evaluate() {
	nf_e = 0; nf_u = 0; nf_s = 0;
	if
	:: op == OP_SIGNUP ->
		if
		:: !G_SIGNUP_ITEM_ABSENT -> res = R_STALE
		:: else -> if
			:: !G_SIGNUP_EMAIL_LOCK_FREE || !G_SIGNUP_HANDLE_LOCK_FREE(UK(u)) ||
			   (SKELETONS && !G_SIGNUP_HANDLE_LOCK_FREE(SK(u))) -> res = R_TAKEN
			:: else ->
				a_ex[a] = 1; a_em[a] = e; a_un[a] = u; a_ver[a] = 1; a_exp[a] = NONE;
				a_upd[a] = next_stamp(a); a_pend[a] = 0; a_nonce[a] = 0; a_used[a] = 1;
				leg_em[a] = 0; leg_un[a] = 0;
				put_lock(EK(e), a, NONE, 0); put_lock(UK(u), a, NONE, 0);
				if :: SKELETONS -> put_lock(SK(u), a, NONE, 0) :: else fi;
				res = R_OK
			fi
		fi
	:: op == OP_SIGNUP_UNVERIFIED ->
		if
		:: !G_SIGNUP_UNVERIFIED_ITEM_ABSENT -> res = R_STALE
		:: else -> if
			:: !G_SIGNUP_UNVERIFIED_HANDLE_FREE(UK(u)) || (SKELETONS && !G_SIGNUP_UNVERIFIED_HANDLE_FREE(SK(u))) ||
			   !G_SIGNUP_UNVERIFIED_EMAIL_FREE -> res = R_TAKEN
			:: else ->
				/* what the email check is for: an address a verified account holds is refused */
				purpose(!protected(0, EK(e)) && !protected(1, EK(e)));
				a_ex[a] = 1; a_em[a] = e; a_un[a] = u; a_ver[a] = 0; a_exp[a] = SET; dl_passed[a] = 0; a_gen[a] = 1 - a_gen[a];
				a_upd[a] = next_stamp(a); a_pend[a] = 0; a_nonce[a] = 0; a_used[a] = 1; rel[a] = 0;
				leg_em[a] = 0; leg_un[a] = 0;
				put_lock(UK(u), a, SET, a);
				if :: SKELETONS -> put_lock(SK(u), a, SET, a) :: else fi;
				res = R_OK
			fi
		fi
	:: op == OP_CHANGE ->
		/* plan_change: a lock moves when its key changes; an unverified email has none */
		if
		/* the item as read: every attribute of a touched constraint (the email's: email and
		 * email_verified), expires > :now when it expires */
		:: !(G_CHANGE_UPDATED_AS_READ && (r_exp == NONE || G_CHANGE_ITEM_LIVE) &&
		     (!ch_e || (G_CHANGE_EMAIL_AS_READ && G_CHANGE_VERIFIED_AS_READ)) && (!ch_u || G_CHANGE_USERNAME_AS_READ)) ->
			res = R_STALE
		:: else -> if
			:: (mv_e && !G_CHANGE_NEW_LOCK_FREE(EK(e))) || (mv_u && !G_CHANGE_NEW_LOCK_FREE(UK(u))) ||
			   (mv_s && !G_CHANGE_NEW_LOCK_FREE(SK(u))) ||
			   (ch_e && !r_ver && !G_CHANGE_EMAIL_FREE) -> res = R_TAKEN   /* an unverified address: checked only */
			:: else -> if
				:: (mv_e && !keep_e && !G_CHANGE_OLD_LOCK_MINE(EK(r_em))) ||
				   (mv_u && !keep_u && !G_CHANGE_OLD_LOCK_MINE(UK(r_un))) ||
				   (mv_s && !keep_s && !G_CHANGE_OLD_LOCK_MINE(SK(r_un))) ->
					/* ALL_OLD names the lock's owner: the retry checks it still does */
					if :: mv_e && !keep_e && !G_CHANGE_OLD_LOCK_MINE(EK(r_em)) -> nf_e = 1; o_e = l_own[EK(r_em)] :: else fi;
					if :: mv_u && !keep_u && !G_CHANGE_OLD_LOCK_MINE(UK(r_un)) -> nf_u = 1; o_u = l_own[UK(r_un)] :: else fi;
					if :: mv_s && !keep_s && !G_CHANGE_OLD_LOCK_MINE(SK(r_un)) -> nf_s = 1; o_s = l_own[SK(r_un)] :: else fi;
					res = R_NOT_OWNED   /* reach: a change's LockNotOwned */
				:: (keep_e && !G_CHANGE_KEPT_LOCK_STILL_OTHER(EK(r_em), o_e)) ||
				   (keep_u && !G_CHANGE_KEPT_LOCK_STILL_OTHER(UK(r_un), o_u)) ||
				   (keep_s && !G_CHANGE_KEPT_LOCK_STILL_OTHER(SK(r_un), o_s)) -> res = R_CANCELLED
				:: else ->
					/* what the email check is for: an address a verified account holds is refused */
					if :: ch_e && !r_ver -> purpose(!protected(0, EK(e)) && !protected(1, EK(e))) :: else fi;
					no_lost_update;
					if :: ch_e -> a_em[a] = e :: else fi;
					if :: ch_u -> a_un[a] = u :: else fi;
					a_upd[a] = next_stamp(a);
					if :: mv_e -> put_lock(EK(e), a, r_exp, a);
						if :: !keep_e -> drop_lock(EK(r_em)) :: else fi
					   :: else fi;
					if :: mv_u -> put_lock(UK(u), a, r_exp, a);
						if :: !keep_u -> drop_lock(UK(r_un)) :: else fi
					   :: else fi;
					if :: mv_s -> put_lock(SK(u), a, r_exp, a);
						if :: !keep_s -> drop_lock(SK(r_un)) :: else fi
					   :: else fi;
					res = R_OK
				fi
			fi
		fi
	:: op == OP_DELETE ->
		if
		:: !(G_DELETE_EMAIL_AS_READ && G_DELETE_USERNAME_AS_READ && G_DELETE_VERIFICATION_AS_READ) ->
			res = R_STALE
		:: else -> if
			:: (r_ver && !keep_e && !G_DELETE_OLD_LOCK_MINE(EK(r_em))) || (!keep_u && !G_DELETE_OLD_LOCK_MINE(UK(r_un))) ||
			   (SKELETONS && !keep_s && !G_DELETE_OLD_LOCK_MINE(SK(r_un))) ->
				if :: r_ver && !keep_e && !G_DELETE_OLD_LOCK_MINE(EK(r_em)) -> nf_e = 1; o_e = l_own[EK(r_em)] :: else fi;
				if :: !keep_u && !G_DELETE_OLD_LOCK_MINE(UK(r_un)) -> nf_u = 1; o_u = l_own[UK(r_un)] :: else fi;
				if :: SKELETONS && !keep_s && !G_DELETE_OLD_LOCK_MINE(SK(r_un)) -> nf_s = 1; o_s = l_own[SK(r_un)] :: else fi;
				res = R_NOT_OWNED   /* reach: a deletion's LockNotOwned */
			:: (keep_e && !G_DELETE_KEPT_LOCK_STILL_OTHER(EK(r_em), o_e)) ||
			   (keep_u && !G_DELETE_KEPT_LOCK_STILL_OTHER(UK(r_un), o_u)) ||
			   (keep_s && !G_DELETE_KEPT_LOCK_STILL_OTHER(SK(r_un), o_s)) -> res = R_CANCELLED
			:: else ->
				if :: r_ver && !keep_e -> drop_lock(EK(r_em)) :: else fi;
				if :: !keep_u -> drop_lock(UK(r_un)) :: else fi;
				if :: SKELETONS && !keep_s -> drop_lock(SK(r_un)) :: else fi;
				drop_account(a);
				/* the account item is now its tombstone */
				if :: TOMBSTONES -> a_tomb[a] = 1 :: else fi;
				res = R_OK
			fi
		fi
	:: op == OP_VERIFY ->
		/* VERIFY_SENDS_LOCKS 0: only the Update, as plan_change once sent it */
		if
		:: !(G_VERIFY_SAME_SIGNUP && G_VERIFY_NOT_EXPIRED &&
		     G_VERIFY_UPDATED_AS_READ && (!VERIFY_SENDS_LOCKS || G_VERIFY_EMAIL_AS_READ)) -> res = R_STALE
		:: else -> if
			:: VERIFY_SENDS_LOCKS && !G_VERIFY_EMAIL_LOCK_FREE -> res = R_TAKEN
			:: VERIFY_SENDS_LOCKS && G_VERIFY_EMAIL_LOCK_FREE &&
			   !(G_VERIFY_HELD_LOCK_MINE(UK(r_un)) && (!SKELETONS || G_VERIFY_HELD_LOCK_MINE(SK(r_un)))) ->
				res = R_CANCELLED   /* reach: a verification refused by a held lock another holds */
			:: else ->
				no_lost_update;
				/* what expires >= :now is for: a sign-up's link stops working at its deadline */
				restating(still_set(a));
				a_ver[a] = 1; a_exp[a] = NONE; a_upd[a] = next_stamp(a);   /* store.update_account */
				if
				:: VERIFY_SENDS_LOCKS ->
					put_lock(EK(r_em), a, NONE, 0);
					l_exp[UK(r_un)] = NONE; l_dl[UK(r_un)] = 0; l_leg[UK(r_un)] = 0;
					if :: SKELETONS -> l_exp[SK(r_un)] = NONE; l_dl[SK(r_un)] = 0 :: else fi
				:: else
				fi;
				res = R_OK
			fi
		fi
	:: op == OP_EMAIL_CHANGE && step == 0 ->
		/* the request: the pending fields and updated as read; the new address checked, no lock moves */
		if
		:: !G_REQUEST_AS_READ -> res = R_STALE
		:: else -> if
			:: !G_REQUEST_NEW_EMAIL_FREE -> res = R_TAKEN
			:: else ->
				/* what the email check is for: an address another account holds is refused now */
				purpose(!protected(0, EK(e)) && !protected(1, EK(e)));
				no_lost_update;
				a_pend[a] = 1; a_nonce[a] = 1 - a_nonce[a]; a_upd[a] = next_stamp(a);
				lk_em = r_em; lk_nonce = a_nonce[a];    /* what the link carries */
				res = R_OK
			fi
		fi
	:: op == OP_EMAIL_CHANGE && step == 1 ->
		/* apply: the account as read when the link was opened (r_*), new address e */
		if
		:: !(G_APPLY_EMAIL_IS_OLD && G_APPLY_PENDING_AS_READ &&
		     G_APPLY_UPDATED_AS_READ) -> res = R_STALE
		:: else -> if
			:: !G_APPLY_NEW_LOCK_FREE -> res = R_TAKEN
			:: G_APPLY_NEW_LOCK_FREE && !keep_e && !G_APPLY_OLD_LOCK_MINE ->
				nf_e = 1; o_e = l_own[EK(r_em)]; res = R_NOT_OWNED   /* retried keeping it, as a change */
			:: G_APPLY_NEW_LOCK_FREE && keep_e && !G_APPLY_KEPT_LOCK_STILL_OTHER(o_e) -> res = R_CANCELLED
			:: else ->
				no_lost_update;
				/* what pending_nonce = :read is for: a link a newer request replaced stops working */
				purpose(a_ex[a] && a_pend[a] && a_nonce[a] == lk_nonce);
				a_em[a] = e; a_pend[a] = 0; a_nonce[a] = 0; a_upd[a] = next_stamp(a);
				put_lock(EK(e), a, NONE, 0);
				if :: !keep_e -> drop_lock(EK(r_em)) :: else fi;
				res = R_OK
			fi
		fi
	:: op == OP_TOUCH ->
		/* store.update_account(password=...) and the like: Update [changed attributes and
		 * updated as read], no lock action; what matters here is its new stamp */
		if
		:: stamp_as_read(a) -> a_upd[a] = next_stamp(a); res = R_OK
		:: else -> res = R_STALE
		fi
	fi;
	if :: res == R_OK -> committed = 1 :: else fi;
	printf("client %d: op %d step %d on account %d (email %d, username %d, keep %d%d%d): answer %d\n",
	       _pid, op, step, a, e, u, keep_e, keep_u, keep_s, res);
	settle()
}

/* Read the account (a consistent GetItem; an expired item reads as absent). */
/* (CLOCKS) Planner p reads its clock, OFF ahead of the true one: the :now of the request it
 * plans (r0, r1: each deadline's age as read), kept until it is sent, resends included. */
inline read_clock(p, off) {
	if
	:: CLOCKS -> r0 = rel[0] + off; r1 = rel[1] + off; planning[p] = 1; plan_rel[(p) * NA] = rel[0]; plan_rel[(p) * NA + 1] = rel[1]
	:: else
	fi
}

/* Read the account (a consistent GetItem; an item expired by the client's clock reads as absent). */
#if CLOCKS
#define seen_live(x)  (a_ex[x] && (a_exp[x] == NONE || rel[x] + OFF_OF(c) <= BIAS))
#else
#define seen_live(x)  a_live(x)
#endif
inline read_account() {
	read_clock(c, OFF_OF(c));
	if
	:: seen_live(a) -> r_ex = 1; r_em = a_em[a]; r_un = a_un[a]; r_ver = a_ver[a]; r_exp = a_exp[a]; r_upd = a_upd[a];
		r_pend = a_pend[a]; r_nonce = a_nonce[a]; r_gen = a_gen[a]
	:: else -> r_ex = 0
	fi
}

inline forget() {
	op = 0; step = 0; a = 0; e = 0; u = 0; res = 0; o_e = 0; o_u = 0; o_s = 0;
	ch_e = 0; ch_u = 0; mv_e = 0; mv_u = 0; mv_s = 0; keep_e = 0; keep_u = 0; keep_s = 0;
	nf_e = 0; nf_u = 0; nf_s = 0; committed = 0;
	r_ex = 0; r_ver = 0; r_upd = 0; r_gen = 0; r_pend = 0; r_nonce = 0; r_em = 0; r_un = 0; r_exp = 0;
	r0 = 0; r1 = 0; planning[c] = 0;
	sending = 0; linked = 0; lk_em = 0; lk_nonce = 0;
	if :: n == OPS_OF(c) -> finished++ :: else fi
}

/* A client: one operation after another, each one atomic step to read and plan, then one
 * atomic step per request sent (the engine's run()):
 * - the answer may be lost, after the request committed or not; the same request is then
 *   resent with the same ClientRequestToken: a token that committed is a no-op answering
 *   success, one that did not is evaluated afresh;
 * - change() and delete() answered LockNotOwned retry once, with a new token and :now,
 *   keeping the old lock that names another item (and checking it still does);
 * - the verified email change sends the request, then (maybe never) the link's apply. */
proctype Client(byte c) {
	byte n = 0, op, step, a, e, u, res, o_e, o_u, o_s;
	bit ch_e, ch_u, mv_e, mv_u, mv_s, keep_e, keep_u, keep_s, nf_e, nf_u, nf_s, committed, sending;
	bit r_ex, r_ver, r_gen, r_pend, r_nonce, linked, lk_nonce;
	byte r_em, r_un, r_exp, r_upd, lk_em, r0, r1;

end:
	do
	:: atomic {
		!sending && !linked && n < OPS_OF(c) ->
		n++;
		/* what the person asks for, and the read (a consistent GetItem) it starts with */
		a = ACCOUNT_OF(c);
		if
		:: MAY(c, OP_SIGNUP) && !(CLOCKS && a_used[a]) -> op = OP_SIGNUP; select(e : 0 .. NE - 1); select(u : 0 .. NU - 1)
		:: MAY(c, OP_SIGNUP_UNVERIFIED) && !(CLOCKS && a_used[a]) ->
			op = OP_SIGNUP_UNVERIFIED; select(e : 0 .. NE - 1); select(u : 0 .. NU - 1)
		:: MAY(c, OP_CHANGE_EMAIL) -> op = OP_CHANGE; ch_e = 1
		:: MAY(c, OP_CHANGE_USERNAME) -> op = OP_CHANGE; ch_u = 1
		:: MAY(c, OP_CHANGE_BOTH) -> op = OP_CHANGE; ch_e = 1; ch_u = 1
		:: MAY(c, OP_DELETE) -> op = OP_DELETE
		:: MAY(c, OP_VERIFY) -> op = OP_VERIFY
		:: MAY(c, OP_EMAIL_CHANGE) -> op = OP_EMAIL_CHANGE
		:: MAY(c, OP_TOUCH) -> op = OP_TOUCH
		fi;
		read_account();
		/* a change asks for the other value (changing to the same one moves no lock) */
		if
		:: op == OP_CHANGE || op == OP_EMAIL_CHANGE ->
			if :: e = (ch_e || op == OP_EMAIL_CHANGE -> (r_em + 1) % NE : 0)
			   :: NE > 2 && (ch_e || op == OP_EMAIL_CHANGE) -> e = (r_em + 2) % NE
			fi;
			if :: u = (ch_u -> (r_un + 1) % NU : 0)
			   :: NU > 2 && ch_u -> u = (r_un + 2) % NU
			fi
		:: else
		fi;
		if
		:: op == OP_SIGNUP || op == OP_SIGNUP_UNVERIFIED -> sending = 1
		:: r_ex && op == OP_CHANGE ->
			/* plan_change: a lock moves when its key changes; an unverified email has none */
			mv_e = (ch_e && r_ver && e != r_em); mv_u = (ch_u && u != r_un); mv_s = (ch_u && skel_moves(r_un, u)); sending = 1
		:: r_ex && op == OP_DELETE -> sending = 1
		:: r_ex && op == OP_VERIFY && !r_ver -> sending = 1
		:: r_ex && op == OP_EMAIL_CHANGE && r_ver -> sending = 1
		:: r_ex && op == OP_TOUCH -> sending = 1
		:: else -> forget()    /* nothing to act on */
		fi
	   }
	:: atomic {
		sending ->
		if
		:: committed -> res = R_OK    /* a resend of a committed token */
		:: else -> evaluate()
		fi;
		if
		:: losses > 0 -> losses--     /* the answer is lost: resend, same token */
		:: true ->
			committed = 0;            /* the next request, if any, has a new token */
			if
			:: res == R_NOT_OWNED && (op == OP_CHANGE || op == OP_DELETE || op == OP_EMAIL_CHANGE) &&
			   !keep_e && !keep_u && !keep_s ->
				/* transactions.running._run_releasing_old_locks: planned again (a new :now) */
				keep_e = nf_e; keep_u = nf_u; keep_s = nf_s; read_clock(c, OFF_OF(c))   /* reach: the keep_locks retry */
			:: res == R_OK && op == OP_EMAIL_CHANGE && step == 0 -> step = 1; sending = 0; linked = 1   /* the link is opened */
			:: res == R_OK && op == OP_EMAIL_CHANGE && step == 0 -> forget()   /* or never */
			:: else -> forget()
			fi
		fi
	   }
	:: atomic {
		/* the link is opened: store.apply_email_change reads the account (GetItem) and sends
		 * only if it still waits for this link (old address, pending change, nonce) */
		linked -> linked = 0;
		read_account();
		if
		:: r_ex && r_ver && r_em == lk_em && r_pend && r_nonce == lk_nonce -> sending = 1
		:: else -> forget()
		fi
	   }
	od
}

/* ---- the audit's repairs (accounts_audit --repair, the staff lock page, accounts_backfill) ---- */

#define R_CLAIM    1
#define R_TRANSFER 2
#define R_RELEASE  3

#define key_value(k)     (is_email(k) -> (k) : (is_handle(k) -> (k) - NE : (k) - NE - NU))
#define read_holds(x, k) (ra_live[x] && ra_val[x] == key_value(k) && (!is_email(k) || ra_ver[x]))

/* The owner check of a transfer or release: none when the lock names nobody; else the owner
 * is still gone, or still holds what was read (a value that does not map to this key). */
#define transfer_owner_ok (o == NOBODY || (gone_o -> G_TRANSFER_OWNER_GONE : \
                           G_TRANSFER_OWNER_AS_READ))
#define release_owner_ok  (o == NOBODY || (gone_o -> G_RELEASE_OWNER_GONE : \
                           G_RELEASE_OWNER_AS_READ))

inline evaluate_repair() {
	if
	:: kind == R_CLAIM ->
		if
		:: G_CLAIM_LOCK_FREE && G_CLAIM_HOLDER_VALUE_AS_READ &&
		   G_CLAIM_HOLDER_VERIFIED_AS_READ ->
			put_lock(k, h, exp_h, h); res = R_OK
		:: else -> res = R_CANCELLED
		fi
	:: kind == R_TRANSFER ->
		if
		:: G_TRANSFER_LOCK_STILL_OWNER && G_TRANSFER_HOLDER_AS_READ && transfer_owner_ok ->
			put_lock(k, h, exp_h, h); res = R_OK
		:: else -> res = R_CANCELLED
		fi
	:: kind == R_RELEASE ->
		if
		:: G_RELEASE_LOCK_STILL_OWNER && release_owner_ok -> drop_lock(k); res = R_OK
		:: else -> res = R_CANCELLED
		fi
	fi;
	if :: res == R_OK -> committed = 1 :: else fi;
	printf("repairer: %d of lock %d for holder %d, owner %d (gone %d): answer %d\n", kind, k, h, o, gone_o, res);
	settle()
}

/* audit._examine on what was read, and audit.plan_repair's choice */
inline examine() {
	if
	:: read_holds(0, k) && read_holds(1, k) -> kind = 0   /* duplicate: a person chooses */
	:: rl_ex && rl_own != NOBODY && read_holds(rl_own, k) -> kind = 0
	:: else ->
		if :: read_holds(0, k) -> h = 0 :: read_holds(1, k) -> h = 1 :: else -> h = NOBODY fi;
		if
		:: !rl_ex && h != NOBODY -> kind = R_CLAIM
		:: rl_ex && h != NOBODY -> kind = R_TRANSFER
		:: rl_ex && h == NOBODY -> kind = R_RELEASE
		:: else -> kind = 0
		fi;
		if :: h != NOBODY -> v_h = ra_val[h]; ver_h = ra_ver[h]; exp_h = ra_exp[h] :: else -> h = 0 fi;
		o = rl_own;
		if :: rl_ex && o != NOBODY -> gone_o = !ra_live[o]; v_o = ra_val[o]; ver_o = ra_ver[o]; exp_o = ra_exp[o] :: else fi
	fi;
	got_l = 0; rl_ex = 0; rl_own = 0;
	got[0] = 0; ra_live[0] = 0; ra_val[0] = 0; ra_ver[0] = 0; ra_exp[0] = 0;
	got[1] = 0; ra_live[1] = 0; ra_val[1] = 0; ra_ver[1] = 0; ra_exp[1] = 0;
	done = 1;
	if :: kind == 0 -> finished++ :: else -> read_clock(PLANNERS - 1, 0) fi
}

#define read_account_for_audit(x) \
	got[x] = 1; ra_live[x] = a_live(x); ra_val[x] = (a_live(x) -> value_of(x, k) : 0); \
	ra_ver[x] = (a_live(x) -> a_ver[x] : 0); ra_exp[x] = (a_live(x) -> a_exp[x] : 0)

/* One lock key examined and repaired: the lock and the accounts are read one by one, in any
 * order (a Scan's pages, or examine_key's GetItems), then the finding is repaired in one
 * guarded transaction (resent with the same token when the answer is lost). */
proctype Repairer(byte k) {
	byte h, o, v_h, v_o, exp_h, exp_o, kind, res, rl_own, r0, r1;
	bit ver_h, ver_o, gone_o, committed, done, got_l, rl_ex;
	bit got[NA], ra_live[NA], ra_ver[NA];
	byte ra_val[NA], ra_exp[NA];

end:
	do
	:: atomic { !done && !got_l -> got_l = 1; rl_ex = l_live(k); rl_own = (l_live(k) -> l_own[k] : 0);
	            if :: got[0] && got[1] -> examine() :: else fi }
	:: atomic { !done && !got[0] -> read_account_for_audit(0);
	            if :: got_l && got[1] -> examine() :: else fi }
	:: atomic { !done && !got[1] -> read_account_for_audit(1);
	            if :: got_l && got[0] -> examine() :: else fi }
	:: atomic {
		kind != 0 ->
		if
		:: committed -> res = R_OK
		:: else -> evaluate_repair()
		fi;
		if
		:: losses > 0 -> losses--
		:: true ->
			kind = 0; h = 0; o = 0; v_h = 0; v_o = 0; exp_h = 0; exp_o = 0; res = 0; ver_h = 0; ver_o = 0; gone_o = 0;
			r0 = 0; r1 = 0; planning[PLANNERS - 1] = 0; committed = 0; finished++
		fi
	   }
	od
}

/* ---- time: deadlines pass, and DynamoDB's TTL deletes expired items, days late ---- */

#define lock_pending(k, d)  (l_exp[k] == SET && l_dl[k] == (d))
#if NK > 4
#define pending(d)  (a_exp[d] == SET || lock_pending(0, d) || lock_pending(1, d) || lock_pending(2, d) || \
                     lock_pending(3, d) || lock_pending(4, d))
#else
#define pending(d)  (a_exp[d] == SET || lock_pending(0, d) || lock_pending(1, d) || lock_pending(2, d) || \
                     lock_pending(3, d))
#endif

inline tick(d) {
	dl_passed[d] = 1;
	if :: a_exp[d] == SET -> a_exp[d] = PASSED :: else fi;
	gk = 0;
	do
	:: gk < NK -> if :: l_exp[gk] == SET && l_dl[gk] == (d) -> l_exp[gk] = PASSED :: else fi; gk++
	:: else -> break
	od;
	gk = 0
}

#if CLOCKS
/* A deadline ages on the true clock, but no planned request's :now may lag it by more than
 * STALE: a request is sent (and resent) within seconds of its planning. */
#define fresh_plan(p, d)  (!planning[p] || rel[d] + 1 <= plan_rel[(p) * NA + (d)] + STALE)
#define may_age(d)        (rel[d] < REL_MAX && pending(d) && \
                           fresh_plan(0, d) && fresh_plan(1, d) && fresh_plan(2, d) && fresh_plan(3, d))
#define ttl_due(k)        (l_exp[k] == SET && !lives(l_dl[k]))

proctype Time() {
end:
	do
	:: atomic {
		if
		:: may_age(0) -> rel[0]++
		:: may_age(1) -> rel[1]++
		:: a_exp[0] == SET && !lives(0) -> drop_account(0)
		:: a_exp[1] == SET && !lives(1) -> drop_account(1)
		:: ttl_due(0) -> drop_lock(0)
		:: ttl_due(1) -> drop_lock(1)
		:: ttl_due(2) -> drop_lock(2)
		:: ttl_due(3) -> drop_lock(3)
#if NK > 4
		:: ttl_due(4) -> drop_lock(4)
#endif
		fi;
		printf("time: deadlines aged %d %d\n", rel[0], rel[1]);
		settle()
	   }
	od
}
#else
proctype Time() {
end:
	do
	:: atomic {
		if
		:: pending(0) -> tick(0)
		:: pending(1) -> tick(1)
		:: a_exp[0] == PASSED -> drop_account(0)
		:: a_exp[1] == PASSED -> drop_account(1)
		:: l_exp[0] == PASSED -> drop_lock(0)
		:: l_exp[1] == PASSED -> drop_lock(1)
		:: l_exp[2] == PASSED -> drop_lock(2)
		:: l_exp[3] == PASSED -> drop_lock(3)
#if NK > 4
		:: l_exp[4] == PASSED -> drop_lock(4)
#endif
		fi;
		printf("time: accounts expires %d %d, locks expires %d %d %d %d\n", a_exp[0], a_exp[1], l_exp[0], l_exp[1], l_exp[2], l_exp[3]);
		settle()
	   }
	od
}
#endif

/* I3: once every client and repairer is done (Time may still run). */
proctype Quiescence() {
	byte k;
	(finished == NC + REPAIRS) ->
	atomic {
		do
		:: k < NK -> assert(I3_at(k)); k++
		:: else -> break
		od
	}
}

/* Data from before the locks (accounts_backfill) or damaged by hand: account 0 shares email 0
 * with account 1, which holds its lock; username 0 (account 0) has no lock; lock EMAIL#1
 * names account 0, which holds email 0 (orphaned); lock HANDLE#1 names account 0, but
 * account 1 holds username 1 (wrong owner). */
inline legacy_data() {
	a_ex[0] = 1; a_ver[0] = 1; a_em[0] = 0; a_un[0] = 0; leg_em[0] = 1; leg_un[0] = 1;
	a_ex[1] = 1; a_ver[1] = 1; a_em[1] = 0; a_un[1] = 1; leg_un[1] = 1;
	l_ex[EK(0)] = 1; l_own[EK(0)] = 1;
	l_ex[EK(1)] = 1; l_own[EK(1)] = 0; l_leg[EK(1)] = 1;
	l_ex[UK(1)] = 1; l_own[UK(1)] = 0; l_leg[UK(1)] = 1
}

#include "sessions.h"
#include "credentials.h"
#include "guards.h"
#include "factors.h"
#include "tokens.h"
#include "codes.h"
#include "keys.h"
#include "addresses.h"

init {
	byte i;
	atomic {
		if
		:: LEGACY == 0 -> skip    /* an empty table */
		:: LEGACY == 0 ->         /* account 0 verified, email 0 and username 0 locked */
			a_ex[0] = 1; a_ver[0] = 1; a_used[0] = 1; put_lock(EK(0), 0, NONE, 0); put_lock(UK(0), 0, NONE, 0);
			if :: SKELETONS -> put_lock(SK(0), 0, NONE, 0) :: else fi
		:: LEGACY == 0 ->         /* account 0 signed up, unverified: its username locked until it expires */
			a_ex[0] = 1; a_exp[0] = SET; a_used[0] = 1; put_lock(UK(0), 0, SET, 0);
			if :: SKELETONS -> put_lock(SK(0), 0, SET, 0) :: else fi
		:: LEGACY == 1 -> legacy_data()
#ifdef START_DATA
		:: LEGACY == 2 -> START_DATA   /* the model's own start (see its .pml) */
#endif
		fi;
		if :: TTL -> run Time() :: else fi;
#if SESSIONS
		cookie[0] = NO_KEY; cookie[1] = NO_KEY;
		run Browser(0); run Browser(1); run PasswordChange(); run SessionTime();
#endif
#if CREDENTIALS
		start_passkeys();
#endif
#if SIGN_IN
		start_sign_ins();
#endif
#if STAFF
		start_staff();
#endif
#if SLOTS
		start_slots();
#endif
#if LIMITS
		start_limits();
#endif
#if FACTORS
		start_factors();
#endif
#if RACES
		start_races();
#endif
#if IDENTITIES
		start_identities();
#endif
#if TOKENS
		start_tokens();
#endif
#if LOGIN_CODES
		start_login_codes();
#endif
#if IDEMPOTENCY
		start_keys();
#endif
#if HIERARCHY
		start_hierarchy();
#endif
#if ADDRESSES
		start_addresses();
#endif
		run Quiescence();
		do
#ifdef REPAIR_KEY
		:: i < REPAIRS -> run Repairer(REPAIR_KEY); i++   /* the key the model repairs */
#else
		:: i < REPAIRS -> if :: run Repairer(0) :: run Repairer(1) :: run Repairer(2) :: run Repairer(3) fi; i++
#endif
		:: i >= REPAIRS && i < REPAIRS + NC -> run Client(i - REPAIRS); i++
		:: else -> break
		od;
		i = 0
	}
}
