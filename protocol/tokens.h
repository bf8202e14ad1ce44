/*
 * The API's refresh tokens (TOKENS, tokens.pml; accounts.headless.tokens), included by
 * model.h. conditions.tsv lists their guards like the others'.
 *
 * One refresh token of a live session of an app; two holders send it at once (the app, and
 * an intruder who copied it), while the owner changes the password, which ends every
 * session of the account (end_sessions deletes the session's item). A refresh checks the
 * token's signature and exp (no state), reads the session (live, logged in as the token's
 * sub; gone: 400), then sends ONE transaction (transactions.plan_refresh):
 *   Put the token's used record   [attribute_not_exists(PK) OR expires < :now - margin]
 *   ConditionCheck the session    [expires >= :now]
 * Committed: a new access token and the next refresh token; cancelled: 400, nothing written.
 * The record outlives the token's exp (and the margin), so the clock adds nothing here.
 *   the purposes (ghosts, not the state the guards read): a refresh token is exchanged at
 *   most once (of the two holders, at most one gets new tokens), and never once its session
 *   ended (nothing a stolen token holds survives the owner's password change).
 */

#ifndef TOKENS
#define TOKENS 0
#endif

#if TOKENS

bit  tk_used;        /* the token's used record exists */
bit  tk_session;     /* the session's item exists (and has not expired) */
byte tk_exchanged;   /* ghost: refreshes that got new tokens */
bit  tk_ended;       /* ghost: the password change ended the session */

/* refresh_token_spend: the record is absent (or expired longer than the margin ago) */
#define G_REFRESH_TOKEN_UNUSED   (!tk_used)
/* session_live_check: expires >= :now on the session's item */
#define G_REFRESH_SESSION_LIVE   (tk_session)

proctype Refresh() {
	bit live;
	atomic { live = tk_session }   /* the consistent read of the session */
	if
	:: !live -> skip               /* 400: its session ended */
	:: else ->
		atomic {
			if
			:: G_REFRESH_TOKEN_UNUSED && G_REFRESH_SESSION_LIVE ->
				tk_used = 1;
				tk_exchanged++;
				purpose(tk_exchanged <= 1);   /* exchanged once */
				purpose(!tk_ended)            /* never after its session ended */
			:: else -> skip                   /* cancelled: 400, nothing written */
			fi
		}
	fi
}

proctype OwnerChangesPassword() {
	atomic { tk_session = 0; tk_ended = 1 }   /* end_sessions deletes the session's item */
}

inline start_tokens() {
	tk_session = 1;
	run Refresh(); run Refresh(); run OwnerChangesPassword()
}

#endif
