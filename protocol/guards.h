/*
 * Guards about several items (issue 30), included by model.h: the staff registry and the
 * last-staff rule (STAFF, staff.pml), the session bound (SLOTS, slots.pml), and a rate
 * limit checked by a sign-in's transaction (LIMITS, limits.pml). conditions.tsv lists their
 * guards like the others'.
 *
 * STAFF: account 0 is active staff, accounts 1 and 2 active and not staff; the registry
 * (PK=STAFF, SK=<account PK>) lists the active staff. Three staff members act at once, each
 * one operation on any account (so one may grant while two revoke or delete): grant or revoke `is_staff`, turn `is_active` off or on,
 * delete. Each is ONE transaction (accounts.transactions.plan_change / plan_delete):
 *   change   Update account [the flag and `updated` as read: the account as read],
 *            Put or Delete its registry entry when it joins or leaves,
 *            and when it leaves: ConditionCheck another member's entry [attribute_exists(PK)],
 *            that member named by a consistent Query of the registry just before (none named:
 *            refused, nothing sent; the check failed: the registry is read again, at most twice)
 *   delete   Put the tombstone [is_staff and is_active as read, and its values], Delete its
 *            entry, and when it was read as a member the same ConditionCheck.
 * Invariants:
 *   L1  at least one account is active staff (asserted after every step);
 *   R1  the registry lists exactly the active staff accounts (after every step).
 * LAST_STAFF_BY_COUNT 1 is the protocol before issue 30: count the registry, refuse when the
 * account is the last, then act with no check; tests/protocol/test_protocol_model.py shows it fails L1.
 *
 * SLOTS: ACCOUNTS_MAX_SESSIONS = 2 slots (SK=SESS_SLOT#<n>, naming the session that holds
 * it), sessions 0 and 1 there at the start, two logins at once (their new sessions 2 and 3).
 * A login reads the partition, chooses a slot (any: the code's choice, a free one or the
 * least recently seen, is one of them), then ONE transaction (plan_login_session): Put its
 * session [attribute_not_exists(PK)], Put the slot [attribute_not_exists(PK) when read
 * absent, holder = read otherwise], Delete the session the slot named as read. Cancelled:
 * read again, at most twice.
 *   S2  no more sessions are live than there are slots (after every step).
 *
 * LIMITS: the second step's limit of 1 guess a window; two wrong codes and one right code
 * at once. Each reads the counter; over the limit by the read: 429. A wrong code is counted
 * by a guarded UpdateItem (count < limit), else 429; a right code signs in with ONE
 * transaction carrying ConditionCheck counter [current < room AND previous <= read]
 * (one window is modelled: both conjuncts are one guard).
 *   the limit's purpose: a right code signs in only while fewer than the limit of wrong
 *   codes were answered "wrong code" (a ghost count, not the counter the guard reads), so
 *   no code is judged once the limit is used up.
 */

#ifndef STAFF
#define STAFF 0
#endif
#ifndef LAST_STAFF_BY_COUNT
#define LAST_STAFF_BY_COUNT 0
#endif
#ifndef SLOTS
#define SLOTS 0
#endif
#ifndef LIMITS
#define LIMITS 0
#endif

bit inv_L1 = 1, inv_R1 = 1, inv_S2 = 1;

#if STAFF

#define NSF     3   /* accounts */
#define NO_SF   NSF
#define ACTORS  3   /* staff members acting at once, one operation each */
#define GRANT 0
#define REVOKE 1
#define DEACTIVATE 2
#define ACTIVATE 3
#define DELETE 4

bit  sf_ex[NSF];        /* the account exists (not deleted) */
bit  sf_staff[NSF];     /* is_staff */
bit  sf_active[NSF];    /* is_active */
bit  sf_reg[NSF];       /* its registry entry exists */

#define sf_member(x)   (sf_ex[x] && sf_staff[x] && sf_active[x])
#define L1             (inv_L1 && (sf_member(0) || sf_member(1) || sf_member(2)))
#define R1_of(x)       (inv_R1 && sf_reg[x] == sf_member(x))

/* plan_change: the account as read (the changed flag and `updated`); plan_delete: is_staff
 * and is_active as read; both: another member's entry is there (registry_actions). */
#define G_STAFF_ITEM_AS_READ(x)           (sf_ex[x] && sf_staff[x] == r_staff && sf_active[x] == r_active)
#define G_DELETE_STAFF_FLAGS_AS_READ(x)   (sf_ex[x] && sf_staff[x] == r_staff && sf_active[x] == r_active)
#define G_OTHER_MEMBER_LISTED(o)          (sf_reg[o])

inline check_staff() {
	assert(L1);
	assert(R1_of(0) && R1_of(1) && R1_of(2))
}

proctype StaffActor(byte i) {
	byte x, op, o, tries, j;
	bit r_staff, r_active, r_ex, was, after, n_staff, n_active;
	atomic {
		select(x : 0 .. NSF - 1); select(op : GRANT .. DELETE);
		r_ex = sf_ex[x]; r_staff = sf_staff[x]; r_active = sf_active[x];
		n_staff = (op == GRANT -> 1 : (op == REVOKE -> 0 : r_staff));
		n_active = (op == ACTIVATE -> 1 : (op == DEACTIVATE -> 0 : r_active));
		was = r_ex && r_staff && r_active;
		after = op != DELETE && n_staff && n_active
	}
	if
	:: !r_ex -> goto done   /* the page 404s */
	:: else
	fi;
again:
	atomic {
		/* the registry's Query, consistent: another member than x, or none */
		o = NO_SF;
#if LAST_STAFF_BY_COUNT
		if
		:: was && !after && sf_reg[0] + sf_reg[1] + sf_reg[2] < 2 -> goto done   /* "the last staff account" */
		:: else
		fi
#else
		if
		:: was && !after ->
			j = 0;
			do
			:: j < NSF -> if :: j != x && sf_reg[j] -> o = j :: else fi; j++
			:: j < NSF -> j++
			:: else -> break
			od;
			j = 0;
			if
			:: o == NO_SF -> goto done   /* LastMember: nothing sent */
			:: else
			fi
		:: else
		fi
#endif
	}
	atomic {
		if
		:: op == DELETE && !G_DELETE_STAFF_FLAGS_AS_READ(x) -> tries = 3   /* StaleItem */
		:: op != DELETE && !G_STAFF_ITEM_AS_READ(x) -> tries = 3          /* StaleItem */
		:: ((op == DELETE && G_DELETE_STAFF_FLAGS_AS_READ(x)) || (op != DELETE && G_STAFF_ITEM_AS_READ(x))) &&
		   o != NO_SF && !G_OTHER_MEMBER_LISTED(o) ->
			tries++   /* the member checked left meanwhile: cancelled, the registry read again */
		:: ((op == DELETE && G_DELETE_STAFF_FLAGS_AS_READ(x)) || (op != DELETE && G_STAFF_ITEM_AS_READ(x))) &&
		   (o == NO_SF || G_OTHER_MEMBER_LISTED(o)) ->
			if
			:: op == DELETE -> sf_ex[x] = 0
			:: else -> sf_staff[x] = n_staff; sf_active[x] = n_active
			fi;
			/* the entry rides on the account's own write: joins, leaves, or deleted with it */
			if :: was != after || op == DELETE -> sf_reg[x] = after :: else fi;
			tries = 3
		fi;
		check_staff()
	}
	if
	:: tries < 2 -> goto again
	:: else
	fi;
done:
	skip
}

inline start_staff() {
	sf_ex[0] = 1; sf_staff[0] = 1; sf_active[0] = 1; sf_reg[0] = 1;
	sf_ex[1] = 1; sf_active[1] = 1;
	sf_ex[2] = 1; sf_active[2] = 1;
	check_staff();
	gk = 0;
	do
	:: gk < ACTORS -> run StaffActor(gk); gk++
	:: else -> break
	od;
	gk = 0
}

#endif

#if SLOTS

#define NSL     2   /* slots: ACCOUNTS_MAX_SESSIONS */
#define NSS     4   /* sessions: 0 and 1 at the start, 2 and 3 the logins' */

bit  sl_ex[NSL];        /* the slot item exists */
byte sl_holder[NSL];    /* the session it names */
bit  ss_live[NSS];      /* the session is live */

#define S2  (inv_S2 && ss_live[0] + ss_live[1] + ss_live[2] + ss_live[3] <= NSL)

/* sessions.slot_put: absent as read, or naming the session read */
#define G_SLOT_FREE(n)              (!sl_ex[n])
#define G_SLOT_HOLDER_AS_READ(n, h) (sl_ex[n] && sl_holder[n] == (h))

proctype Login(byte s) {
	byte n, h, tries;
	bit r_ex;
	do
	:: tries < 3 ->
		atomic { select(n : 0 .. NSL - 1); r_ex = sl_ex[n]; h = sl_holder[n] }   /* the partition's Query */
		atomic {
			if
			:: (!r_ex && G_SLOT_FREE(n)) || (r_ex && G_SLOT_HOLDER_AS_READ(n, h)) ->
				sl_ex[n] = 1; sl_holder[n] = s; ss_live[s] = 1;
				if :: r_ex -> ss_live[h] = 0 :: else fi;   /* the session the slot named ends */
				tries = 3
			:: else -> tries++   /* the slot changed hands: cancelled, read again */
			fi;
			assert(S2)
		}
	:: else -> break
	od
}

inline start_slots() {
	/* session 0 holds slot 1; slot 0 is absent, or names session 1, which has ended */
	sl_ex[1] = 1; sl_holder[1] = 0; ss_live[0] = 1;
	if
	:: skip
	:: sl_ex[0] = 1; sl_holder[0] = 1
	fi;
	assert(S2);
	run Login(2); run Login(3)
}

#endif

#if LIMITS

#define LIMIT   1   /* guesses a window */

byte lm_count;      /* the counter's current window */
byte lm_wrong;      /* ghost: guesses answered "wrong code" */

/* Counter.under_limit, sent with the sign-in: current < room AND previous <= read */
#define G_LIMIT_UNDER   (lm_count < LIMIT)

proctype Guess(bit right) {
	byte read;
	atomic { read = lm_count }   /* read with the account */
	atomic {
		if
		:: read + 1 > LIMIT -> skip   /* 429 by the read */
		:: read + 1 <= LIMIT && !right ->
			if
			:: lm_count < LIMIT -> lm_count++; lm_wrong++   /* counted: "wrong code" */
			:: else -> skip                                   /* 429: concurrent guesses used it up */
			fi
		:: read + 1 <= LIMIT && right ->
			if
			:: G_LIMIT_UNDER -> purpose(lm_wrong < LIMIT)   /* signed in: only while guesses were left */
			:: else -> skip                                 /* OverLimit: 429, the code not judged aloud */
			fi
		fi
	}
}

inline start_limits() {
	run Guess(0); run Guess(0); run Guess(1)
}

#endif

/* ---- the staff hierarchy (issue 35, hierarchy.pml) ----
 *
 * HIERARCHY: account 0, whose owner is a superuser or not (chosen at the start), and two
 * staff members: 1 a superuser, 2 not. Each staff member changes account 0 once (a new
 * password, address, flag, factor removed, a deletion: ONE transaction each), while a
 * superuser makes account 0 a superuser's (a promotion) and another demotes staff member 1.
 * A staff member's page reads account 0 and their own account (their session's read); one
 * who is no superuser is refused before anything is sent when account 0 reads as a
 * superuser's (accounts.staff.hierarchy.may_act_on). The change's transaction
 * (accounts.transactions.hierarchy.staff_guards) carries:
 *   account 0's is_superuser as read            G_STAFF_TARGET_AS_READ
 *   when read a superuser's: ConditionCheck of the staff member's own account
 *   [is_superuser AND is_staff AND is_active]   G_STAFF_ACTOR_SUPERUSER
 * No `updated` stamp is trusted (a deletion guards none), so each guard does its work alone.
 *   H1  a change of a superuser's account commits only by a staff member who is an active
 *       staff superuser when it commits (after every step).
 */

#ifndef HIERARCHY
#define HIERARCHY 0
#endif

bit inv_H1 = 1;

#if HIERARCHY

bit  hy_super[3];   /* is_superuser of accounts 0, 1, 2 */
bit  hy_staff[3];   /* is_staff and is_active (one bit: the staff pages need both) */
bit  hy_breach;     /* ghost: a change of a superuser's account by anyone else committed */

#define G_STAFF_TARGET_AS_READ     (hy_super[0] == r_super)
#define G_STAFF_ACTOR_SUPERUSER    (hy_super[a] && hy_staff[a])
#define H1                         (inv_H1 && !hy_breach)

inline check_hierarchy() {
	assert(H1)
}

/* Staff member a changes account 0: reads it and themselves, then ONE transaction. */
proctype StaffChange(byte a) {
	bit r_super, r_acting, ok;
	atomic {
		r_super = hy_super[0];
		r_acting = hy_super[a] && hy_staff[a];
		ok = hy_staff[a] && (r_acting || !r_super)   /* the staff pages, then the hierarchy's refusal */
	}
	atomic {
		if
		:: ok && G_STAFF_TARGET_AS_READ && (!r_super || G_STAFF_ACTOR_SUPERUSER) ->
			hy_breach = hy_breach || (hy_super[0] && !(hy_super[a] && hy_staff[a]))
		:: else -> skip   /* SuperuserOnly (nothing sent), StaleItem or ActorRefused */
		fi;
		check_hierarchy()
	}
}

/* A superuser makes account 0 a superuser's (accounts_createstaff's manager, or a superuser's
 * own write: not a staff page's action). */
proctype Promote() {
	atomic { hy_super[0] = 1; check_hierarchy() }
}

/* Staff member 1 demoted, or their staff access taken away, or deactivated. */
proctype Demote() {
	atomic {
		if
		:: hy_super[1] = 0
		:: hy_staff[1] = 0
		fi;
		check_hierarchy()
	}
}

inline start_hierarchy() {
	hy_super[1] = 1; hy_staff[1] = 1; hy_staff[2] = 1;
	if
	:: hy_super[0] = 1
	:: hy_super[0] = 0
	fi;
	run StaffChange(1); run StaffChange(2); run Promote(); run Demote()
}

#endif
