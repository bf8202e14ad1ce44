/*
 * Second factors sharing state with the account (issue 30), included by model.h after
 * credentials.h, whose guards they reuse: conditions.tsv lists every guard, and the rows of
 * the transactions modelled here name them.
 *
 * FACTORS (factors.pml): account 0, verified, in one of four scenarios, chosen at the
 * start (so the state space is their sum, not their product):
 *
 *   TOTP: the account with no second factor, or with a passkey and its recovery codes; two
 *   enrolments (two tabs, two secrets) racing the account's deletion and two uses
 *   of one code (a sign-in's or a reauthentication's step record) on servers whose clocks
 *   are SKEW apart, while time passes and TTL deletes the step's record (late, any time
 *   after it expired, on a clock as fast as the fastest server's).
 *     enrol    Update account SET totp_secret, totp_created, totp_step = the code's step
 *              (and new recovery codes when it had none) [totp_* absent as read AND
 *              updated = read AND (the codes' case) recovery_codes absent as read]
 *              (accounts.mfa.store.enable_totp: ONE change; no record outside the account)
 *     use      Put TOTP#<step> [attribute_not_exists(PK) OR expires < :now - margin],
 *              expires = the last instant a code of the step matches + RECORD_MARGIN
 *              (totp.step_record_expires: at least the margin), after reading the account: its secret, and its
 *              totp_step (a code of the enrolment's step is already used: login.py's
 *              step_spent_at_enrolment). The code is matched with the clock the
 *              transaction's :now comes from (one request: milliseconds, against 30 s steps).
 *   F1  an authenticator app is in force only as the one enrolment answered success, and
 *       only on a live account: two enrolments are never both told success, and none
 *       writes its secret onto a deleted account's tombstone (after every step);
 *   F2  a code of one time step is accepted once, the enrolment counting as its use,
 *       whatever the server's clock (within the margin) and whenever TTL runs.
 *
 *   CODES: the account with TOTP and a set of recovery codes; two sign-ins with one code X
 *   of the set, a regeneration of the codes and the removal of the app (its last second
 *   factor, which removes the codes: disable_totp).
 *     spend       Update account DELETE recovery_codes X ADD used_recovery_codes X
 *                 [contains(recovery_codes, X)]
 *     regenerate  Update account SET recovery_codes = new, REMOVE used_recovery_codes
 *                 [recovery_codes, used_recovery_codes, updated as read]
 *     disable     Update account REMOVE totp_*, recovery_codes, used_recovery_codes
 *                 [all of them and updated as read]
 *   F3  a recovery code is accepted once, and only while its set is the account's (a code
 *       of a set replaced or removed is refused); of two spends of one code, exactly one
 *       wins unless the set was replaced first; an account holds recovery codes only while
 *       it has a second factor, and holds them while its app is on.
 *
 *   KEEP: the account with a passkey and its recovery codes, no app; an enrolment keeping
 *   the codes races the passkey's removal, the last factor, which drops them:
 *     enrol   as above, the codes kept [recovery_codes as read] (store.enable_totp)
 *     remove  Update account REMOVE passkeys, recovery_codes, used_recovery_codes
 *             [passkeys, the codes, updated as read AND attribute_not_exists(totp_secret)]
 *             (store.remove_passkey; with the app on as read, the codes stay)
 *     (F3: the app never on with no recovery codes)
 *
 *   REAUTH: a reauthentication with a synced passkey, whose signature counter stays 0, the
 *   same answer sent twice from one session (accounts.mfa.flows.reauthentication):
 *     ONE transaction: Put the new session, Delete the session that held the challenge
 *     [expires >= :now], Update the credential item [sign_count = read] (0 = 0 again).
 *   F4  a reauthentication's challenge is accepted once, whatever the counter.
 *
 * No `updated` stamp is trusted (STAMPS 0 in factors.pml): two servers' clocks may write the
 * same one, so each guard on a value as read must do its work alone.
 *
 * RACES (sign_in_races.pml): account 0, verified and active, with a passkey (its lock and
 * credential item), an authenticator app and a recovery code; three sign-ins (each from a
 * half-login of its own: TOTP, recovery code, passkey) race the account's deletion or its
 * deactivation (and then its reactivation by staff), and the removal of the passkey.
 * Deletion and deactivation are each ONE transaction, then `end_sessions`: a Query of the
 * account's sessions, then a BatchWriteItem deleting those it found. Each sign-in's
 * transaction checks the account still there and active as read (G_SIGN_IN_ACCOUNT_ACTIVE):
 * without it, a sign-in that read the account before its deactivation commits after
 * end_sessions' Query, and the reactivation lets its session in. A request with a session's cookie reads the
 * session with its account, and gets in only while that account is live and active
 * (sessions.SessionStore.load, backends.get_user): LOAD_CHECKS_ACCOUNT.
 *   A1  a session gets in only as a live, active account, and only when made by a
 *       sign-in that committed while the account was live and active and still held the
 *       passkey or recovery code it used (after every step).
 * LOAD_CHECKS_ACCOUNT 0 (a session item trusted alone) with SIGN_IN_CHECKS_ACCOUNT 0 (the
 * sign-in checking nothing of the account, as before) fails A1: end_sessions' Query misses
 * a sign-in landing after it (tests/protocol/test_protocol_model.py).
 *   A second scenario, LOGINS (issue 35), chosen at the start instead of those sign-ins: a
 * login's session write with no second factor (a password login, a provider's, the login
 * after a sign-up: sessions.SessionStore's transaction, the session's Put with the check
 * that the account it read is still there and active, G_LOGIN_ACCOUNT_ACTIVE) and a
 * logged-in session reauthenticating (with a passkey or a mailed code: ONE transaction
 * deletes the session [expires >= :now], puts its successor under a new key and checks the
 * account as a sign-in does, G_SIGN_IN_ACCOUNT_ACTIVE) race the same deletion or deactivation, end_sessions and
 * reactivation. Without either check, its session lands between end_sessions' Query and its
 * BatchWriteItem, escapes it, and the reactivation lets it in (A1).
 *   A third, ENDS (issue 35, the known gaps): the owner ends sessions without changing the
 * account ("log out other sessions" keeping its own session 0; DELETE auth/sessions; staff's
 * "end sessions", which keeps none: the same transaction) while session 1 reauthenticates
 * into a new key, 2. The end reads the sessions (its session's load, or a Query), then ONE
 * transaction deletes each one read, guarded by its still being there
 * (G_ENDED_SESSION_AS_READ, accounts.transactions.plan_end_sessions); cancelled, it reads
 * them again and sends again. A session renewed from one it ended counts as ended (it
 * keeps the session's id, by which the API ends it). A1 also holds that once the end
 * returned, no session it ended gets in: without the guard, the reauthentication lands
 * between the read and the deletion, which deletes the old key and leaves the new one in.
 *
 * IDENTITIES (identities.pml): the OpenID Connect identity lock, UNIQ#OIDC#<issuer>#<subject>,
 * owned by the account (its set-valued constraint `oidc_identities`). The set and its locks
 * have the shape of `passkeys` and theirs, with no credential item, and every transaction
 * guards them the same way, so conditions.tsv gives their rows the passkeys' guards and
 * this model uses them on the same state (a_pk, p_ex, p_own, spelled here a_ids, id_ex,
 * id_own). Its own processes: a first sign-in with a provider (the sign-up's create with
 * the identity's lock), linking and unlinking (the account's change), deleting.
 *   I1  an identity is held by at most one live account; I2 every identity a live account
 *   holds has a lock naming it (after every step); I3 once every client is done, every
 *   identity lock names a live account holding it (no orphan).
 * Or, chosen at the start (so the state space is the sum): one ID token an app posts to
 * auth/provider/token twice (issue 35, item 5), on servers SKEW apart, while time passes and
 * TTL deletes the token's record. Each post verifies the token (accepted while its server's
 * clock reads at most TOKEN_LAST: the token's exp plus the leeway), then either signs in with
 * ONE transaction holding the record's Put [attribute_not_exists(PK) OR expires < :now -
 * margin] (G_ID_TOKEN_UNUSED), or sends that Put alone and then remembers a half-login or a
 * pending sign-up in its session. The record expires TOKEN_RECORD_MARGIN after TOKEN_LAST
 * (providers.store.id_token_spend: the clock-skew margin).
 *   T1  an ID token gets in once at most: one session, half-login or pending sign-up, on
 *       servers whose clocks (and TTL's) are apart within the margin, whenever TTL runs.
 */

#ifndef FACTORS
#define FACTORS 0
#endif
#ifndef RACES
#define RACES 0
#endif
#ifndef IDENTITIES
#define IDENTITIES 0
#endif
#ifndef LOAD_CHECKS_ACCOUNT
#define LOAD_CHECKS_ACCOUNT 1
#endif
#ifndef SIGN_IN_CHECKS_ACCOUNT
#define SIGN_IN_CHECKS_ACCOUNT 1
#endif

bit inv_F1 = 1, inv_F2 = 1, inv_F3 = 1, inv_F4 = 1, inv_A1 = 1, inv_T1 = 1;

/* ---- the account's second factors ---- */

byte tf_secret;     /* totp_secret (with totp_created, totp_step): 0 none, else the enrolment's */
bit  tf_spent;      /* totp_step: the enrolment used the step of the codes below */
byte rc_set;        /* recovery_codes: 0 none, else which set (1 the first, 2 regenerated) */
byte fa_done;       /* processes of the scenario done */

/* attribute_not_exists(totp_secret), totp_created and totp_step (one write sets or removes
 * all three: one guard), or each = :read; true on an item that is not there when read absent */
#define G_TOTP_AS_READ            (r_secret == 0 -> tf_secret == 0 : (a_ex[a] && tf_secret == r_secret))
/* recovery_codes and used_recovery_codes as read (X's spend changes both: one guard) */
#define G_RECOVERY_CODES_AS_READ  (r_set == 0 -> rc_set == 0 : (a_ex[a] && rc_set == r_set && code_left == r_left))

#if FACTORS

#define TOTP_CASE   0
#define CODES_CASE  1
#define REAUTH_CASE 2
#define KEEP_CASE   3
byte fa_case;

/* TOTP: the clock in ticks; a code of the step matches on a server whose clock reads at
 * most LAST; its record expires RECORD_MARGIN after (totp.step_record_expires: the clock-skew
 * margin, or 300 s if longer). Server 0's clock is the slowest, server 1's and TTL's run SKEW
 * ahead (clocks within MARGIN). */
#ifndef LAST
#define LAST 2
#endif
#ifndef RECORD_MARGIN
#define RECORD_MARGIN MARGIN
#endif
#define REC_EXPIRES     (LAST + RECORD_MARGIN)
#define TMAX            (REC_EXPIRES + MARGIN + 1)
#define SERVER_OFF(i)   ((i) == 1 -> SKEW : 0)
byte tt;            /* the true clock */
byte tf_told;       /* ghost: enrolments answered success */
byte tf_uses;       /* ghost: uses of the step's code accepted (the enrolment's included) */
/* CODES: ghosts */
byte rc_uses;       /* acceptances of code X */
bit  rc_replaced;   /* X's set was replaced or removed */
/* REAUTH: ghost */
byte ra_in;         /* reauthentications accepted with the one challenge */

#define F1  (inv_F1 && tf_told <= 1 && (a_ex[0] || tf_secret == 0))
#define F2  (inv_F2 && tf_uses <= 1)
#define F3  (inv_F3 && rc_uses <= 1 && (rc_set == 0 || tf_secret != 0 || a_pk[0] != 0) && (tf_secret == 0 || rc_set != 0))

inline check_factors() {
	assert(F1);
	assert(F2);
	assert(F3);
	assert(inv_F4 && ra_in <= 1)
}

/* Two tabs enrolling with secrets 1 and 2 (each with the code of the step, matched at its
 * server's clock): ONE Update of the account as read. */
proctype Enrol(byte id) {
	byte a, r_secret, r_set, r_upd;
	bit ok, r_left, this_step;
	atomic {
		a = 0; ok = a_live(a) && tt + SERVER_OFF(id - 1) <= LAST; r_secret = tf_secret; r_set = rc_set; r_left = code_left;
		if :: this_step = 1 :: this_step = 0 fi   /* its code: of the step the uses' code is of, or an earlier one */
	}
	atomic {
		if
		:: ok && r_secret == 0 && r_set == 0 && G_TOTP_AS_READ && G_RECOVERY_CODES_AS_READ && G_CHANGE_UPDATED_AS_READ ->
			/* the first second factor: with new recovery codes. An Update of an item that
			 * is not there would create it: updated = :read is what refuses a tombstone
			 * (which holds no stamp) */
			tf_secret = id; tf_spent = this_step; rc_set = 1; code_left = 1; tf_told++; tf_uses = tf_uses + this_step
		:: ok && r_secret == 0 && r_set != 0 && G_TOTP_AS_READ && G_RECOVERY_CODES_AS_READ && G_CHANGE_UPDATED_AS_READ ->
			/* a passkey came first: the account's recovery codes are kept, guarded as read */
			tf_secret = id; tf_spent = this_step; tf_told++; tf_uses = tf_uses + this_step
		:: else -> skip   /* StaleItem, or the app is on already */
		fi;
		check_factors();
		fa_done++
	}
}

/* The account deleted (its tombstone Put in its place, with nothing but its key). */
proctype DeleteAccount() {
	atomic {
		if
		:: a_ex[0] -> drop_account(0); a_tomb[0] = 1; tf_secret = 0; tf_spent = 0; rc_set = 0; code_left = 0; a_pk[0] = 0
		:: else -> skip
		fi;
		check_factors();
		fa_done++
	}
}

/* A sign-in's (or a reauthentication's) use of the code of the step on server i: the
 * account read, then ONE transaction with the step record's guarded Put. */
proctype UseCode(byte i) {
	bit ok;
	byte r_now;
	atomic { ok = a_live(0) && tf_secret != 0 && !tf_spent }
	atomic {
		r_now = tt + SERVER_OFF(i);
		if
		:: ok && r_now <= LAST && G_TOTP_STEP_FREE -> step_used = 1; tf_uses++
		:: else -> skip   /* a wrong (or late) code, or StaleItem: used already */
		fi;
		check_factors();
		fa_done++
	}
}

proctype Clock() {
	do
	:: atomic { tt < TMAX -> tt++ }
	:: atomic { step_used && tt + SKEW > REC_EXPIRES -> step_used = 0 }   /* TTL: expires < its now */
	:: atomic { fa_done == 5 -> break }
	od
}

/* One of two sign-ins with recovery code X: the account read, then its spend. */
proctype SpendCode() {
	bit ok;
	atomic { ok = a_live(0) && rc_set == 1 && code_left }
	atomic {
		if
		:: ok && G_RECOVERY_CODE_UNUSED -> code_left = 0; rc_uses++; assert(inv_F3 && !rc_replaced)
		:: else -> skip   /* used meanwhile (StaleItem: "already used"), or not listed as read */
		fi;
		check_factors();
		fa_done++
	}
}

/* New recovery codes replace the set as read. */
proctype Regenerate() {
	byte a, r_set, r_upd;
	bit r_left;
	atomic { a = 0; r_set = rc_set; r_left = code_left }
	atomic {
		if
		:: r_set != 0 && G_RECOVERY_CODES_AS_READ && G_CHANGE_UPDATED_AS_READ ->
			rc_set = 2; code_left = 0; rc_replaced = 1
		:: else -> skip
		fi;
		check_factors();
		fa_done++
	}
}

/* The authenticator app removed: the last second factor, so the recovery codes go with it. */
proctype Disable() {
	byte a, r_secret, r_set, r_upd;
	bit r_left;
	atomic { a = 0; r_secret = tf_secret; r_set = rc_set; r_left = code_left }
	atomic {
		if
		:: r_secret != 0 && G_TOTP_AS_READ && G_RECOVERY_CODES_AS_READ && G_CHANGE_UPDATED_AS_READ ->
			tf_secret = 0; tf_spent = 0; rc_set = 0; code_left = 0; rc_replaced = 1
		:: else -> skip
		fi;
		check_factors();
		fa_done++
	}
}

/* The removal of the passkey, the account's last second factor while the app is off as read:
 * ONE change of the account, its passkeys as read, the recovery codes dropped (as read) and
 * the app still off as read (attribute_not_exists(totp_secret), kept); with the app on as
 * read, the codes stay. */
proctype RemoveLastPasskey() {
	byte a, r_pk, r_secret, r_set, r_upd;
	bit r_left;
	atomic { a = 0; r_pk = a_pk[a]; r_secret = tf_secret; r_set = rc_set; r_left = code_left }
	atomic {
		if
		:: r_pk != 0 && r_secret == 0 && G_PASSKEYS_AS_READ && G_TOTP_AS_READ && G_RECOVERY_CODES_AS_READ && G_CHANGE_UPDATED_AS_READ ->
			a_pk[a] = 0; rc_set = 0; code_left = 0
		:: r_pk != 0 && r_secret != 0 && G_PASSKEYS_AS_READ && G_CHANGE_UPDATED_AS_READ ->
			a_pk[a] = 0
		:: else -> skip   /* StaleItem */
		fi;
		check_factors();
		fa_done++
	}
}

/* A reauthentication with the synced passkey (counter 0), session 0 holding the challenge. */
proctype Reauthenticate() {
	byte s, r_count;
	bit ok;
	atomic { s = 0; ok = st_live[s] && holds_pk(0, 0) && item_of(0, 0); r_count = counter }
	atomic {
		if
		:: ok && G_STAGE_LIVE && G_SIGN_COUNT_AS_READ -> st_live[s] = 0; counter = 0; ra_in++
		:: else -> skip   /* StaleItem: the session (or the counter) changed */
		fi;
		check_factors();
		fa_done++
	}
}

/* At the end of the recovery codes' scenario: of the two spends, exactly one won, unless
 * the set was replaced or removed first. */
proctype FactorsDone() {
	(fa_case == CODES_CASE && fa_done == 4) ->
	atomic { assert(inv_F3 && (rc_uses == 1 || (rc_replaced && rc_uses == 0))) }
}

inline start_factors() {
	a_ex[0] = 1; a_ver[0] = 1;
	if
	:: fa_case = TOTP_CASE;
		if
		:: skip
		:: a_pk[0] = PK_BIT(0); rc_set = 1; code_left = 1   /* a passkey and its recovery codes first */
		fi;
		run Clock(); run Enrol(1); run Enrol(2); run DeleteAccount(); run UseCode(0); run UseCode(1)
	:: fa_case = CODES_CASE;
		tf_secret = 1; rc_set = 1; code_left = 1;
		run FactorsDone(); run SpendCode(); run SpendCode(); run Regenerate(); run Disable()
	:: fa_case = REAUTH_CASE;
		a_pk[0] = PK_BIT(0); p_ex[0] = 1; p_own[0] = 0; item_of(0, 0) = 1; st_live[0] = 1;
		run Reauthenticate(); run Reauthenticate()
	:: fa_case = KEEP_CASE;
		a_pk[0] = PK_BIT(0); rc_set = 1; code_left = 1;   /* a passkey and its recovery codes */
		run Enrol(1); run RemoveLastPasskey()
	fi
}

#endif

/* ---- a sign-in racing deletion, deactivation and the passkey's removal ---- */

#if RACES

#define NSS 3               /* sign-ins, each with a half-login and a new session of its own */
bit  ac_active = 1;         /* is_active */
bit  ss[NSS];               /* the session sign-in k made exists (in the account's partition) */
bit  ss_sound[NSS];         /* ghost: its factor was the account's when it committed */
byte rc_done;

/* A request with session k's cookie: the session read with its account (one Query), and
 * let in only as a live, active account. */
#define gets_in(k)  (ss[k] && (!LOAD_CHECKS_ACCOUNT || (a_live(0) && ac_active)))
/* A sign-in's account as read: is_active = :read (read active), so there and no tombstone
 * (the staged password's ConditionCheck, the recovery code's Update, or a check of its own) */
#define G_SIGN_IN_ACCOUNT_ACTIVE  (a_live(0) && ac_active)
/* A login's session write (no second factor): is_active = :read too, a ConditionCheck of
 * its own (account_active) in its transaction */
#define G_LOGIN_ACCOUNT_ACTIVE    (a_live(0) && ac_active)
/* ENDS: session k is one the owner's end of sessions ended (read by it, or renewed from one:
 * a ghost), and that end returned. */
bit  ss_ended[NSS];
bit  ends_done;
/* An end of sessions' Delete of session k as read: attribute_exists(PK), still there */
#define G_ENDED_SESSION_AS_READ(k)  (ss[k])
#define A1_of(k)    (inv_A1 && (!gets_in(k) || (a_live(0) && ac_active && ss_sound[k])) && \
                     !(ends_done && ss_ended[k] && gets_in(k)))

inline check_races() {
	assert(A1_of(0) && A1_of(1) && A1_of(2))
}

/* Sign-in k, with its factor: reads the account, its credential item and counter, then ONE
 * transaction (plan_sign_in): the session's Put, the half-login's Delete [G_STAGE_LIVE],
 * the factor's write, the account as read [G_SIGN_IN_ACCOUNT_ACTIVE]. A TOTP step's record is not the account's: nothing there refuses a
 * sign-in landing after the app's removal or the account's deletion (its session is then
 * let in by nobody, or made by a code that was right when checked). */
proctype RacingSignIn(byte s; byte factor) {
	byte r_count;
	bit ok;
	atomic {
		ok = st_live[s] && a_live(0) && ac_active &&
		     (factor != BY_TOTP || tf_secret != 0) &&
		     (factor != BY_RECOVERY || code_left) &&
		     (factor != BY_PASSKEY || (holds_pk(0, 0) && item_of(0, 0)));
		r_count = counter
	}
	atomic {
		if
		:: ok && G_STAGE_LIVE && (!SIGN_IN_CHECKS_ACCOUNT || G_SIGN_IN_ACCOUNT_ACTIVE) &&
		   (factor != BY_TOTP || G_TOTP_STEP_FREE) &&
		   (factor != BY_RECOVERY || G_RECOVERY_CODE_UNUSED) &&
		   (factor != BY_PASSKEY || G_SIGN_COUNT_AS_READ) ->
			st_live[s] = 0; ss[s] = 1;
			ss_sound[s] = a_live(0) && ac_active &&
			              (factor == BY_TOTP || factor == BY_RECOVERY || holds_pk(0, 0));
			if
			:: factor == BY_TOTP -> step_used = 1
			:: factor == BY_RECOVERY -> code_left = 0   /* an Update: on a tombstone, it writes onto it */
			:: factor == BY_PASSKEY -> counter = r_count + 1; item_of(0, 0) = 1   /* an Update creates what is not there */
			fi
		:: else -> skip
		fi;
		check_races();
		rc_done++
	}
}

/* The account's deletion or deactivation (one transaction), then end_sessions: a Query of
 * its sessions, then a BatchWriteItem deleting each one found; after a deactivation, staff
 * may reactivate the account (Update is_active [as read]). */
proctype Ender() {
	byte r_pk, a, found;
	bit r_active, deletes;
	atomic {
		a = 0; r_pk = a_pk[a]; r_active = ac_active;
		if :: deletes = 1 :: deletes = 0 fi
	}
	atomic {
		if
		:: deletes && a_ex[a] && G_DELETE_PASSKEYS_AS_READ ->
			/* deletion: the tombstone Put [values and passkeys as read], the passkey's lock
			 * and credential item deleted with it, its second factors gone with the item */
			if :: r_pk & PK_BIT(0) -> p_ex[0] = 0; p_own[0] = 0; item_of(a, 0) = 0 :: else fi;
			a_pk[a] = 0; drop_account(a); a_tomb[a] = 1; tf_secret = 0; code_left = 0
		:: !deletes && a_ex[a] && ac_active == r_active ->
			/* deactivation: Update is_active [is_active and updated as read] */
			ac_active = 0
		:: else -> skip   /* StaleItem */
		fi;
		check_races()
	}
	atomic { found = ss[0] | (ss[1] << 1) | (ss[2] << 2) }
	atomic {
		if :: found & 1 -> ss[0] = 0 :: else fi;
		if :: found & 2 -> ss[1] = 0 :: else fi;
		if :: found & 4 -> ss[2] = 0 :: else fi;
		check_races()
	}
	atomic {
		if
		:: !deletes && a_ex[a] && !ac_active -> ac_active = 1   /* reactivation */
		:: skip
		fi;
		check_races();
		rc_done++
	}
}

/* The passkey's removal: the account's passkeys as read, the lock and credential item deleted. */
proctype RemovePasskey() {
	byte a, r_pk, r_upd;
	atomic { a = 0; r_pk = a_pk[a] }
	atomic {
		if
		:: (r_pk & PK_BIT(0)) && G_PASSKEYS_AS_READ && G_CHANGE_UPDATED_AS_READ && (!p_ex[0] || p_own[0] == a) ->
			a_pk[a] = 0; p_ex[0] = 0; p_own[0] = 0; item_of(a, 0) = 0
		:: else -> skip
		fi;
		check_races();
		rc_done++
	}
}

/* LOGINS: a login with no second factor reads the account (active: its password checked),
 * then ONE transaction writes its session k [attribute_not_exists(PK)] with the account
 * checked [G_LOGIN_ACCOUNT_ACTIVE] (sessions.SessionStore._write_login). */
proctype LoginSession(byte k) {
	bit ok;
	atomic { ok = a_live(0) && ac_active }
	atomic {
		if
		:: ok && G_LOGIN_ACCOUNT_ACTIVE -> ss[k] = 1; ss_sound[k] = a_live(0) && ac_active
		:: else -> skip   /* AccountRefused: nothing written, nobody logged in */
		fi;
		check_races();
		rc_done++
	}
}

/* LOGINS: a request with session k's cookie (let in: the session read with its account)
 * reauthenticates: ONE transaction deletes session k [expires >= :now: still there], puts
 * its successor, session `next` (a new key: end_sessions' Query made before it does not
 * name it), and checks the account [G_SIGN_IN_ACCOUNT_ACTIVE: it is a sign-in's
 * transaction] (reauthentication._record_spending). */
proctype Reauthentication(byte k; byte next) {
	bit ok;
	atomic { ok = gets_in(k) }
	atomic {
		if
		:: ok && ss[k] && G_SIGN_IN_ACCOUNT_ACTIVE ->
			ss[k] = 0; ss[next] = 1; ss_sound[next] = ss_sound[k] && a_live(0) && ac_active;
			ss_ended[next] = ss_ended[k]   /* the same session (its id), under a new key */
		:: else -> skip   /* StaleItem: the session ended, or the account is no longer active */
		fi;
		check_races();
		rc_done++
	}
}

/* ENDS: the owner ends every session of the account but its own, session 0 (or staff end
 * them all: the same transaction), changing nothing of the account. Its click names the
 * sessions it ends; then it reads them (found), and ONE transaction deletes each one read
 * [G_ENDED_SESSION_AS_READ]; cancelled (one is gone: renewed, or ended elsewhere), it
 * reads them again (accounts.logouts.log_out_sessions). */
proctype OwnerEndsSessions() {
	byte found;
	atomic { ss_ended[1] = ss[1]; ss_ended[2] = ss[2] }
	do
	:: atomic { found = (ss[1] & ss_ended[1]) << 1 | (ss[2] & ss_ended[2]) << 2 }
	   atomic {
		if
		:: ((found & 2) == 0 || G_ENDED_SESSION_AS_READ(1)) && ((found & 4) == 0 || G_ENDED_SESSION_AS_READ(2)) ->
			if :: found & 2 -> ss[1] = 0 :: else fi;
			if :: found & 4 -> ss[2] = 0 :: else fi;
			ends_done = 1
		:: else -> skip   /* StaleItem: nothing deleted; read again */
		fi;
		check_races()
	   }
	   if :: ends_done -> break :: else fi
	od;
	atomic { rc_done++ }
}

inline start_races() {
	a_ex[0] = 1; a_ver[0] = 1;
	if
	:: /* SIGN_INS: three sign-ins with a second factor, the passkey's removal */
		a_pk[0] = PK_BIT(0); p_ex[0] = 1; p_own[0] = 0; item_of(0, 0) = 1;
		tf_secret = 1; code_left = 1;
		st_live[0] = 1; st_live[1] = 1; st_live[2] = 1;
		run RacingSignIn(0, BY_TOTP); run RacingSignIn(1, BY_RECOVERY); run RacingSignIn(2, BY_PASSKEY);
		run Ender(); run RemovePasskey()
	:: /* LOGINS: a password login, and session 1 (logged in before) reauthenticating into 2 */
		ss[1] = 1; ss_sound[1] = 1;
		run LoginSession(0); run Reauthentication(1, 2); run Ender()
	:: /* ENDS: the owner's session 0 ends the others while session 1 reauthenticates into 2 */
		ss[0] = 1; ss_sound[0] = 1; ss[1] = 1; ss_sound[1] = 1;
		run Reauthentication(1, 2); run OwnerEndsSessions()
	fi
}

#endif

/* ---- the OpenID Connect identity lock ---- */

#if IDENTITIES

/* The passkeys' state, spelled as identities: the account's `oidc_identities` and the lock
 * of each (issuer, subject). */
#define a_ids   a_pk
#define id_ex   p_ex
#define id_own  p_own
#define holds_id(x, c)  holds_pk(x, c)
byte id_done;

#define O1_of(c)    (inv_I1 && !(holds_id(0, c) && holds_id(1, c)))
#define O2_at(x, c) (inv_I2 && (!holds_id(x, c) || (id_ex[c] && id_own[c] == (x))))
#define O3_of(c)    (inv_I3 && (!id_ex[c] || holds_id(id_own[c], c)))

inline check_identities() {
	assert(O1_of(0) && O1_of(1));
	assert(O2_at(0, 0) && O2_at(0, 1) && O2_at(1, 0) && O2_at(1, 1))
}

#define ID_SIGNUP 1
#define ID_LINK   2
#define ID_UNLINK 3
#define ID_DELETE 4

/* A person's provider login, or a tab of account 0: reads, chooses, sends ONE transaction.
 * A first sign-in with identity c creates account a with it: Put account
 * [attribute_not_exists(PK)] and Put the identity's lock [G_PASSKEY_LOCK_FREE] (and its
 * email and username locks, which accounts.pml models). */
proctype IdentityClient(byte a; bit signs_up) {
	byte c, op, r_pk, r_upd;
	atomic {
		if
		:: signs_up -> op = ID_SIGNUP; c = 0
		:: !signs_up && a_live(a) && !has_pk(a, 0) -> op = ID_LINK; c = 0
		:: !signs_up && a_live(a) && !has_pk(a, 1) -> op = ID_LINK; c = 1
		:: !signs_up && a_live(a) && has_pk(a, 0) -> op = ID_UNLINK; c = 0
		:: !signs_up && a_live(a) && has_pk(a, 1) -> op = ID_UNLINK; c = 1
		:: !signs_up && a_live(a) -> op = ID_DELETE
		:: !signs_up && !a_live(a) -> op = 0   /* deleted meanwhile: nothing to do */
		fi;
		r_pk = (a_live(a) -> a_ids[a] : 0)
	}
	atomic {
		if
		:: op == ID_SIGNUP ->
			if
			:: G_SIGNUP_ITEM_ABSENT && G_PASSKEY_LOCK_FREE(c) ->
				a_ex[a] = 1; a_ver[a] = 1; a_ids[a] = PK_BIT(c); id_ex[c] = 1; id_own[c] = a
			:: else -> skip   /* UniqueViolation: the identity is another account's: it logs in there */
			fi
		:: op == ID_LINK ->
			if
			:: G_PASSKEYS_AS_READ && G_CHANGE_UPDATED_AS_READ && G_PASSKEY_LOCK_FREE(c) ->
				a_ids[a] = r_pk | PK_BIT(c); id_ex[c] = 1; id_own[c] = a
			:: else -> skip   /* StaleItem, or UniqueViolation: another account holds it */
			fi
		:: op == ID_UNLINK ->
			/* the release is the engine's generic `owner = me OR attribute_not_exists(PK)` */
			if
			:: G_PASSKEYS_AS_READ && G_CHANGE_UPDATED_AS_READ && (!id_ex[c] || id_own[c] == a) ->
				a_ids[a] = r_pk & ~PK_BIT(c); id_ex[c] = 0; id_own[c] = 0
			:: else -> skip
			fi
		:: op == ID_DELETE ->
			if
			:: a_ex[a] && G_DELETE_PASSKEYS_AS_READ ->
				if :: (r_pk & PK_BIT(0)) && (!id_ex[0] || id_own[0] == a) -> id_ex[0] = 0; id_own[0] = 0 :: else fi;
				if :: (r_pk & PK_BIT(1)) && (!id_ex[1] || id_own[1] == a) -> id_ex[1] = 0; id_own[1] = 0 :: else fi;
				a_ids[a] = 0; drop_account(a); a_tomb[a] = 1
			:: else -> skip
			fi
		:: else -> skip
		fi;
		check_identities();
		id_done++
	}
}

proctype IdentitiesDone() {
	(id_done == 3) ->
	atomic { assert(O3_of(0) && O3_of(1)) }
}

/* ---- an ID token an app posts: accepted once ---- */

/* The token's time in ticks: accepted on a server whose clock reads at most TOKEN_LAST;
 * its record expires TOKEN_RECORD_MARGIN after. Server 0's clock is the slowest, server 1's
 * and TTL's run SKEW ahead (within MARGIN). */
#ifndef TOKEN_LAST
#define TOKEN_LAST 1
#endif
#ifndef TOKEN_RECORD_MARGIN
#define TOKEN_RECORD_MARGIN MARGIN
#endif
#define TOKEN_EXPIRES  (TOKEN_LAST + TOKEN_RECORD_MARGIN)
#define TOKEN_TMAX     (TOKEN_EXPIRES + MARGIN + 1)
bit  tok_rec;       /* the record that the token was accepted exists */
byte tok_in;        /* ghost: sessions, half-logins and pending sign-ups the token got */
byte tok_tt;        /* the true clock */
byte tok_done;      /* posts done */

/* attribute_not_exists(PK) OR expires < :now - margin, at the posting server's :now */
#define G_ID_TOKEN_UNUSED  (!tok_rec || r_now - MARGIN > TOKEN_EXPIRES)
#define T1  (inv_T1 && tok_in <= 1)

/* A post of the token on a server `off` ahead: verified and sent at one :now (one request:
 * milliseconds, against the token's minutes), as ONE sign-in transaction with the record's
 * Put, or the Put alone and then a half-login or a pending sign-up saved in the session. */
proctype PostToken(byte off) {
	byte r_now;
	bit alone, spent;
	atomic {
		if :: alone = 0 :: alone = 1 fi;
		r_now = tok_tt + off;
		if
		:: r_now <= TOKEN_LAST && G_ID_TOKEN_UNUSED ->
			tok_rec = 1; spent = 1;
			if :: !alone -> tok_in++ :: else fi
		:: else -> skip   /* expired, or StaleItem: used already (400 invalid_token) */
		fi;
		assert(T1)
	}
	atomic {
		if :: alone && spent -> tok_in++ :: else fi;   /* the session remembers it, after the Put */
		assert(T1);
		tok_done++
	}
}

proctype TokenClock() {
	do
	:: atomic { tok_tt < TOKEN_TMAX -> tok_tt++ }
	:: atomic { tok_rec && tok_tt + SKEW > TOKEN_EXPIRES -> tok_rec = 0 }   /* TTL: expires < its now */
	:: atomic { tok_done == 2 -> break }
	od
}

/* Account 0 exists (verified), holding identity 1 or none; account 1's id is free. A first
 * sign-in with identity 0 (account 1), and two tabs of account 0 linking, unlinking or
 * deleting it. Or one ID token posted twice, on the slowest and the fastest server. */
inline start_identities() {
	if
	:: a_ex[0] = 1; a_ver[0] = 1;
		if
		:: skip
		:: a_ids[0] = PK_BIT(1); id_ex[1] = 1; id_own[1] = 0
		fi;
		check_identities();
		run IdentitiesDone();
		run IdentityClient(1, 1); run IdentityClient(0, 0); run IdentityClient(0, 0)
	:: run TokenClock(); run PostToken(0); run PostToken(SKEW)
	fi
}

#endif
