/*
 * Sessions (accounts.sessions), included by model.h and run when SESSIONS is 1: an item per
 * session in its account's partition (PK=ACCT#id, SK=SESSION#secret), with `expires`. Not
 * transactions: each write is one conditional PutItem or DeleteItem, and conditions.tsv
 * lists their conditions (session_create, session_save) like the transactions'.
 *
 *   S1  a cookie gets in only as the login that made its session, and never again once
 *       that session ended: logged out, ended by a password change, or expired.
 *
 * A login draws a random key for its session (165 bits): the model lets it draw the key of
 * any session still in the table, never one whose session ended (that would take 2^165
 * draws; the cookie of an ended session would then name a stranger's). The account's
 * password is one bit, its version: Django's session hash, checked on every request, is
 * the password's, so a session made with the old password gets nobody in after a change.
 */
#if SESSIONS

#define NS      2   /* session keys a login may draw */
#define NL      2   /* logins (browsers); each keeps its cookie, which anyone may copy */
#define NO_KEY  NS
#define STEPS   3   /* requests per browser after its login: load, save, log out, in any order */

bit  s_ex[NS];      /* session item exists */
byte s_login[NS];   /* the login it was made by (its data: the user id and session hash) */
bit  s_hash[NS];    /* the session hash it holds: the password version at login */
byte s_exp[NS];     /* expires: SET, or PASSED (TTL deletes it later) */
bit  pw;            /* the account's password version */
bit  retired[NS];   /* a key whose session ended: never drawn again */
byte cookie[NL];    /* the key each login's cookie holds, NO_KEY before its login */
bit  s_ended[NL];   /* ghost: that login's session ended */
byte s_done;        /* browsers, the password change and time that are done */

/* sessions._put: NEW_SESSION_CONDITION, SAVE_CONDITION (expires > :now: false on a missing item) */
#define G_SESSION_KEY_FREE      (!s_ex[k])
#define G_SESSION_LIVE          (s_ex[k] && s_exp[k] == SET)

#define authenticates(i)  (cookie[i] != NO_KEY && s_ex[cookie[i]] && s_exp[cookie[i]] == SET && s_hash[cookie[i]] == pw)
#define S1_of(i)          (!authenticates(i) || (s_login[cookie[i]] == i && !s_ended[i]))

inline check_sessions() {
	assert(inv_S1 && S1_of(0) && S1_of(1))
}

/* A session's item is gone (DeleteItem, BatchWriteItem) or its time is up: it ended. */
inline end_session(key) {
	s_ended[s_login[key]] = 1; retired[key] = 1
}

/* A browser: logs in (the password checked against the account as read, then a new
 * session Put under a random key; SessionStore.create draws again when the key is taken),
 * then requests that load the session, save what they loaded, or log out. */
proctype Browser(byte i) {
	byte k, steps;
	bit read_pw, loaded, l_hash;
	byte l_login;

	atomic { read_pw = pw }    /* the login form: the password matches the account as read */
	atomic {
		select(k : 0 .. NS - 1);
		if
		:: retired[k] -> cookie[i] = NO_KEY   /* (never drawn: see above) */
		:: !retired[k] && G_SESSION_KEY_FREE ->
			s_ex[k] = 1; s_login[k] = i; s_hash[k] = read_pw; s_exp[k] = SET; cookie[i] = k
		:: !retired[k] && !G_SESSION_KEY_FREE -> cookie[i] = NO_KEY   /* taken: drawn again, modelled as a failed login */
		fi;
		check_sessions()
	}
end_requests:
	do
	:: atomic {
		cookie[i] != NO_KEY && steps < STEPS -> steps++; k = cookie[i];
		if
		/* a request loads the session (BatchGetItem with the account): it must be live */
		:: s_ex[k] && s_exp[k] == SET -> loaded = 1; l_login = s_login[k]; l_hash = s_hash[k]
		/* the request that loaded it saves what it loaded (last seen, data): guarded Put */
		:: loaded ->
			if
			:: G_SESSION_LIVE -> s_login[k] = l_login; s_hash[k] = l_hash; s_exp[k] = SET
			:: else -> skip    /* UpdateError: SessionInterrupted, nothing revived */
			fi;
			loaded = 0
		/* logout: DeleteItem; the cookie stays in the browser (and in any copy of it) */
		:: s_ex[k] && s_login[k] == i -> s_ex[k] = 0; end_session(k)
		:: else -> skip
		fi;
		check_sessions()
	   }
	:: atomic { cookie[i] == NO_KEY || steps == STEPS -> s_done++; break }
	od
}

/* A password change or reset elsewhere: the new password, then end_sessions (a Query of
 * the account's sessions, then a BatchWriteItem deleting them), two requests apart. */
proctype PasswordChange() {
	bit found[NS];
	byte j;
	atomic { pw = 1 - pw; check_sessions() }
	atomic {
		j = 0;
		do :: j < NS -> found[j] = s_ex[j]; j++ :: else -> break od
	}
	atomic {
		j = 0;
		do
		:: j < NS -> if :: found[j] && s_ex[j] -> s_ex[j] = 0; end_session(j) :: else fi; j++
		:: else -> break
		od;
		check_sessions();
		s_done++
	}
}

/* Time: a session's expires passes (it ended), and TTL deletes it later. */
proctype SessionTime() {
	byte j;
end:
	do
	:: atomic {
		select(j : 0 .. NS - 1);
		if
		:: s_ex[j] && s_exp[j] == SET -> s_exp[j] = PASSED; end_session(j)
		:: s_ex[j] && s_exp[j] == PASSED -> s_ex[j] = 0
		:: else -> skip
		fi;
		check_sessions()
	   }
	od
}

#endif
