/*
 * Login by a mailed code (accounts.login_codes), included by model.h after credentials.h,
 * whose half-login guard it reuses (the session holding the code is deleted as a staged
 * session is: G_STAGE_LIVE). conditions.tsv lists the code's sign-in (`sign_in_code`).
 *
 * LOGIN_CODES (login_codes.pml): account 0, verified and active; two browsers asked for a
 * code, each mailed (or texted) under the account's password, address and phone number as
 * they were (version 0 of each). The code is an HMAC of the session's seed, the password's
 * stamp, the address and the number, so a confirmation that reads the account after a
 * change makes another code, and the typed one is wrong. A right one signs in with ONE
 * transaction (accounts.transactions.plan_sign_in with code_as_issued):
 *   Put the new session, Delete the session holding the code [expires >= :now],
 *   ConditionCheck account [password = :read AND email = :read AND phone = :read (or
 *   attribute_not_exists(phone), read absent) AND is_active = :read].
 * Three confirmations race: two of one browser's code (two tabs), one of the other's; the
 * owner changes the password (or resets it: a new hash either way), changes the address and
 * changes (or removes) the number, each ONE write of the account. Asserted at each commit,
 * as what each guard is for (purpose(), said of ghost flags, not of the guarded attributes):
 * a code logs in once, and never after the password, the address or the number it was sent
 * under changed (the change may commit between the confirmation's read, which makes the
 * code from the account as read, and its transaction).
 */

#ifndef LOGIN_CODES
#define LOGIN_CODES 0
#endif

byte code_pw;           /* the account's password (a version): codes were mailed under 0 */
byte code_em;           /* the account's address (a version): codes were mailed to 0 */
byte code_ph;           /* the account's number (a version; removed is another): codes were texted to 0 */
bit  code_pw_changed;   /* ghost: the owner changed or reset the password */
bit  code_em_changed;   /* ghost: the owner changed the address */
bit  code_ph_changed;   /* ghost: the owner changed or removed the number */
byte mail_in[2];        /* ghost: sign-ins with browser b's code */

#define G_CODE_PASSWORD_AS_ISSUED  (code_pw == r_pw)
#define G_CODE_EMAIL_AS_ISSUED     (code_em == r_em)
#define G_CODE_PHONE_AS_ISSUED     (code_ph == r_ph)

#if LOGIN_CODES

/* A confirmation of browser b's code (its session: staged session b of credentials.h). It
 * reads the session and the account, makes the code from the account as read (right only
 * if the password, the address and the number are those it was sent under), then sends its
 * one transaction. */
proctype ConfirmCode(byte b) {
	bit ok;
	byte r_pw, r_em, r_ph;
	byte s = b;

	atomic {
		r_pw = code_pw;
		r_em = code_em;
		r_ph = code_ph;
		ok = st_live[s] && r_pw == 0 && r_em == 0 && r_ph == 0
	}
	atomic {
		if
		:: ok && G_STAGE_LIVE && G_CODE_PASSWORD_AS_ISSUED && G_CODE_EMAIL_AS_ISSUED && G_CODE_PHONE_AS_ISSUED ->
			st_live[s] = 0; mail_in[b]++;
			purpose(mail_in[b] == 1);       /* a code logs in once */
			purpose(!code_pw_changed);      /* never after the password it was mailed under changed */
			purpose(!code_em_changed);      /* never after the address it was mailed to changed */
			purpose(!code_ph_changed)       /* never after the number it was texted to changed */
		:: else -> skip   /* cancelled (StaleItem: used, or the account changed), or refused */
		fi;
		printf("code sign-in: browser %d\n", b)
	}
}

/* The owner changes the password, or resets it: a new (salted) hash, in one write. */
proctype CodeOwnerChangesPassword() {
	atomic { code_pw = 1; code_pw_changed = 1 }
}

/* The owner's email change applies: a new address, in one write. */
proctype CodeOwnerChangesAddress() {
	atomic { code_em = 1; code_em_changed = 1 }
}

/* The owner changes or removes the number (accounts.phones.store: verify, set_unverified,
 * remove): another value of the attribute, or none, in one write. */
proctype CodeOwnerChangesPhone() {
	atomic { code_ph = 1; code_ph_changed = 1 }
}

inline start_login_codes() {
	st_live[0] = 1; st_live[1] = 1;
	run CodeOwnerChangesPassword();
	run CodeOwnerChangesAddress();
	run CodeOwnerChangesPhone();
	run ConfirmCode(0);
	run ConfirmCode(0);
	run ConfirmCode(1)
}

#endif
