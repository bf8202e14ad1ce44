/*
 * Passkeys and second factors (accounts.mfa), included by model.h, run by credentials.pml
 * (CREDENTIALS 1) and sign_in.pml (SIGN_IN 1). conditions.tsv lists their guards like the
 * others'.
 *
 * CREDENTIALS: an account's passkeys are a set attribute of the account item (`passkeys`,
 * a set-valued unique constraint): each credential id c is locked under UNIQ#WEBAUTHN#<c>
 * (a lock naming the account) and has a credential item in the account's partition.
 * Registering, removing and deleting the account are each ONE transaction:
 *   register c   Update account SET passkeys = read + {c} [passkeys = read AND updated = read],
 *                Put lock c [attribute_not_exists(PK) OR expires < :now - margin],
 *                Put credential item [attribute_not_exists(PK)]     (accounts.mfa.store.add_passkey)
 *   remove c     Update account SET passkeys = read - {c} [passkeys = read AND updated = read],
 *                Delete lock c [owner = me OR attribute_not_exists(PK)], Delete credential item
 *   delete       Put the account's tombstone [its values AND passkeys = read], Delete every
 *                lock it holds [owner = me OR ...], Delete every credential item
 *                (transactions.plan_delete)
 * The accounts here are verified: their credential locks never expire, so a lock Put's
 * `expires < :now - margin` never frees one (accounts.pml and clocks.pml model that disjunct).
 * Invariants, on the credential locks: I1, I2 and I3 of model.h for the WEBAUTHN keys (each
 * tagged as that invariant, so the mutation proof counts them as such):
 *   P1  (I1) each credential id is held by at most one live account;
 *   P2  (I2) every credential id a live account holds has a lock naming it and a credential item;
 *   P3  (I3) once every client is done, every credential lock names a live account holding
 *       its id, and every credential item is of a live account holding its id.
 * P1 and P2 are asserted after every step, P3 at quiescence.
 *
 * SIGN_IN: the single-use writes of a sign-in (accounts.transactions.plan_sign_in), ONE
 * transaction each: the new session's Put, the Delete of the session that held the
 * half-login or the passkey challenge [expires >= :now], and the factor's write: a TOTP time
 * step's record [attribute_not_exists(PK) OR expires < :now - margin], a recovery code's
 * removal [contains(recovery_codes, :code)], a passkey's signature counter [sign_count =
 * :read]; and the account's password as read [password = :read] (a ConditionCheck, or a
 * conjunct of the recovery code's Update). Asserted at each commit, as what each guard is
 * for (purpose(), counted by the mutation proof; each is said of ghost counters, not of the
 * guarded attribute): a half-login (or challenge) logs in once, a TOTP step and a recovery
 * code are accepted once, an accepted signature counter is greater than every one accepted
 * before it (a cloned authenticator's older count never lands last), and no half-login begun
 * before the owner's password change logs in after it (the change may commit between a
 * sign-in's read, which compares the stamp, and its transaction).
 */

#ifndef CREDENTIALS
#define CREDENTIALS 0
#endif
#ifndef SIGN_IN
#define SIGN_IN 0
#endif

/* ---- passkeys: registration, removal and deletion ---- */

#define NP      2   /* credential ids */
#define PK_BIT(c)        (1 << (c))
#define has_pk(x, c)     ((a_pk[x] & PK_BIT(c)) != 0)
#define holds_pk(x, c)   (a_live(x) && has_pk(x, c))
#define item_of(x, c)    c_item[(x) * NP + (c)]

byte a_pk[NA];          /* the account's `passkeys`, a set of credential ids (bits) */
bit  c_item[NA * NP];   /* the credential item of (account, id) exists */
bit  p_ex[NP];          /* the lock of credential id c exists */
byte p_own[NP];         /* and names this account */
byte pk_finished;       /* passkey clients done */

/* `passkeys = :read`, or attribute_not_exists(passkeys) when it was read empty (true on an
 * item that is not there, as in DynamoDB); the credential item's attribute_not_exists(PK) on
 * a registration shares it: one write adds the id and the item, and removes both */
#define passkeys_as_read(x)     (r_pk == 0 -> (!a_ex[x] || a_pk[x] == 0) : (a_ex[x] && a_pk[x] == r_pk))
#define G_PASSKEYS_AS_READ      passkeys_as_read(a)
#define G_PASSKEY_LOCK_FREE(c)  (!p_ex[c])
#define G_DELETE_PASSKEYS_AS_READ passkeys_as_read(a)

#define P1_of(c)  (inv_I1 && !(holds_pk(0, c) && holds_pk(1, c)))
#define P2_at(x, c) (inv_I2 && (!holds_pk(x, c) || (p_ex[c] && p_own[c] == (x) && item_of(x, c))))
#define P3_of(c)  (inv_I3 && (!p_ex[c] || holds_pk(p_own[c], c)) && (!item_of(0, c) || holds_pk(0, c)) && \
                   (!item_of(1, c) || holds_pk(1, c)))

#if CREDENTIALS

#ifndef PK_CLIENTS
#define PK_CLIENTS 3
#endif
#ifndef PK_ACCOUNT_OF
#define PK_ACCOUNT_OF(i)  ((i) % NA)
#endif

inline check_passkeys() {
	assert(P1_of(0) && P1_of(1));
	assert(P2_at(0, 0) && P2_at(0, 1) && P2_at(1, 0) && P2_at(1, 1))
}

#define PK_REGISTER 1
#define PK_REMOVE   2
#define PK_DELETE   3

/* A person (or a tab) on one account: reads it (a consistent GetItem), chooses to register
 * a credential id it does not hold, remove one it holds, or delete the account, and sends
 * that one transaction. An Update on an item that is not there would create it: the model
 * keeps it absent (no email, no username: no account), so a lock naming it breaks P3. */
proctype PasskeyClient(byte i) {
	byte a, c, op, r_pk, r_upd;
	bit r_ex;

	atomic {
		a = PK_ACCOUNT_OF(i);
		r_ex = a_live(a); r_pk = (r_ex -> a_pk[a] : 0);
		if
		:: r_ex && !has_pk(a, 0) -> op = PK_REGISTER; c = 0
		:: r_ex && !has_pk(a, 1) -> op = PK_REGISTER; c = 1
		:: r_ex && has_pk(a, 0) -> op = PK_REMOVE; c = 0
		:: r_ex && has_pk(a, 1) -> op = PK_REMOVE; c = 1
		:: r_ex -> op = PK_DELETE
		:: else -> op = 0
		fi
	}
	atomic {
		if
		:: op == PK_REGISTER ->
			if
			:: G_PASSKEYS_AS_READ && G_CHANGE_UPDATED_AS_READ && G_PASSKEY_LOCK_FREE(c) ->
				a_pk[a] = r_pk | PK_BIT(c); p_ex[c] = 1; p_own[c] = a; item_of(a, c) = 1
			:: else -> skip   /* StaleItem, or UniqueViolation: another account holds it */
			fi
		:: op == PK_REMOVE ->
			if
			:: G_PASSKEYS_AS_READ && G_CHANGE_UPDATED_AS_READ && (!p_ex[c] || p_own[c] == a) ->
				a_pk[a] = r_pk & ~PK_BIT(c); p_ex[c] = 0; p_own[c] = 0; item_of(a, c) = 0
			:: else -> skip
			fi
		:: op == PK_DELETE ->
			/* the account's other values as read hold (nothing here changes them); the
			 * locks and items released are those of the passkeys it was read with */
			if
			:: a_ex[a] && G_DELETE_PASSKEYS_AS_READ ->
				if :: (r_pk & PK_BIT(0)) && (!p_ex[0] || p_own[0] == a) -> p_ex[0] = 0; p_own[0] = 0 :: else fi;
				if :: (r_pk & PK_BIT(1)) && (!p_ex[1] || p_own[1] == a) -> p_ex[1] = 0; p_own[1] = 0 :: else fi;
				if :: r_pk & PK_BIT(0) -> item_of(a, 0) = 0 :: else fi;
				if :: r_pk & PK_BIT(1) -> item_of(a, 1) = 0 :: else fi;
				/* and its email and username locks, as accounts.pml's delete */
				if :: l_own[EK(a_em[a])] == a -> drop_lock(EK(a_em[a])) :: else fi;
				if :: l_own[UK(a_un[a])] == a -> drop_lock(UK(a_un[a])) :: else fi;
				a_pk[a] = 0; drop_account(a);
				if :: TOMBSTONES -> a_tomb[a] = 1 :: else fi   /* the account item is now its tombstone */
			:: else -> skip
			fi
		:: else -> skip
		fi;
		printf("passkey client %d: op %d, credential %d, account %d (read %d)\n", i, op, c, a, r_pk);
		check_passkeys();
		pk_finished++
	}
}

proctype PasskeyQuiescence() {
	(pk_finished == PK_CLIENTS) ->
	atomic { assert(P3_of(0) && P3_of(1)) }
}

/* Account 0 may start with credential 0 (locked, with its item). */
inline start_passkeys() {
	if
	:: skip
	:: a_pk[0] = PK_BIT(0); p_ex[0] = 1; p_own[0] = 0; item_of(0, 0) = 1
	fi;
	check_passkeys();
	run PasskeyQuiescence();
	gk = 0;
	do
	:: gk < PK_CLIENTS -> run PasskeyClient(gk); gk++
	:: else -> break
	od;
	gk = 0
}

#endif

/* ---- sign-ins: the single-use writes ---- */

#define NST     4   /* staged sessions (half-logins, or passkey challenges), one per sign-in attempt pair */

bit  st_live[NST];  /* the staged session still lives */
byte st_in[NST];    /* ghost: sessions logged in from it */
bit  step_used;     /* the record of the TOTP step the codes below belong to exists */
byte step_in;       /* ghost: sign-ins that used that step */
bit  code_left;     /* the recovery code is still on the account */
byte code_in;       /* ghost: sign-ins that used it */
byte counter;       /* the passkey's stored signature counter */
byte best;          /* ghost: the greatest counter a sign-in stored */
byte stage_pw;      /* the account's password (a version; sessions.h has its own): half-logins begin with 0 */
bit  pw_changed;    /* ghost: the owner changed the password */

#define G_STAGE_LIVE            st_live[s]
#define G_TOTP_STEP_FREE        (!step_used || step_record_free)
#define G_RECOVERY_CODE_UNUSED  code_left
#define G_SIGN_COUNT_AS_READ    (item_of(0, 0) && counter == r_count)   /* false on a deleted item */
#define G_PASSWORD_AS_STAGED    (stage_pw == r_stage_pw)

/* expires < :now - margin: the record of the step expired longer ago than the margin, by the
 * using server's clock (factors.h; in sign_in.pml no time passes and a record never expires) */
#if FACTORS
#define step_record_free  (r_now - MARGIN > REC_EXPIRES)
#else
#define step_record_free  0
#endif

#define BY_TOTP      1
#define BY_RECOVERY  2
#define BY_PASSKEY   3

#if SIGN_IN

/* A sign-in: the second step (or a passkey login) of staged session s, with a factor; it
 * reads (the session, the account, the credential item), checks the factor as the code
 * does (a code that matches, a recovery code still listed, a counter greater than the one
 * read), then sends its one transaction. `count` is the passkey's counter in its answer. */
proctype SignIn(byte s; byte factor; byte count) {
	bit ok;
	byte r_count;
	byte r_stage_pw;

	atomic {
		ok = st_live[s] && (factor != BY_RECOVERY || code_left);
		r_count = counter;
		r_stage_pw = stage_pw;
		ok = ok && r_stage_pw == 0;    /* the stamp of the password it was begun with, as read */
		ok = ok && (factor != BY_PASSKEY || count > r_count)
	}
	atomic {
		if
		:: ok && G_STAGE_LIVE && G_PASSWORD_AS_STAGED &&
		   (factor != BY_TOTP || G_TOTP_STEP_FREE) &&
		   (factor != BY_RECOVERY || G_RECOVERY_CODE_UNUSED) &&
		   (factor != BY_PASSKEY || G_SIGN_COUNT_AS_READ) ->
			st_live[s] = 0; st_in[s]++;
			purpose(st_in[s] == 1);     /* a half-login (a challenge) logs in once */
			purpose(!pw_changed);       /* never after the owner's password change */
			if
			:: factor == BY_TOTP -> step_used = 1; step_in++; purpose(step_in == 1)
			:: factor == BY_RECOVERY -> code_left = 0; code_in++; purpose(code_in == 1)
			:: factor == BY_PASSKEY -> purpose(count > best); best = count; counter = count
			fi
		:: else -> skip   /* cancelled (StaleItem: used already), or refused before sending */
		fi;
		printf("sign-in: session %d, factor %d, count %d\n", s, factor, count)
	}
}

/* The owner changes the password (or resets it): a new hash, in one write of the account. */
proctype OwnerChangesPassword() {
	atomic { stage_pw = 1; pw_changed = 1 }
}

/* Two sign-ins from one half-login with different factors (only the session's guard stops
 * the second), two half-logins with one TOTP code and one recovery code, and a passkey and
 * its clone with counters 1 and 2 from two challenges; the owner changes the password
 * meanwhile. */
inline start_sign_ins() {
	st_live[0] = 1; st_live[1] = 1; st_live[2] = 1; st_live[3] = 1;
	code_left = 1; item_of(0, 0) = 1;
	run OwnerChangesPassword();
	run SignIn(0, BY_TOTP, 0);
	run SignIn(0, BY_RECOVERY, 0);
	run SignIn(1, BY_TOTP, 0);
	run SignIn(1, BY_RECOVERY, 0);
	run SignIn(2, BY_PASSKEY, 1);
	run SignIn(3, BY_PASSKEY, 2)
}

#endif
