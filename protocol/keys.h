/*
 * Idempotency keys (accounts.idempotency), included by model.h, run by idempotency_keys.pml
 * (IDEMPOTENCY 1). conditions.tsv lists the claim's PutItem (`idempotency_claim`).
 *
 * One caller sends one key to one operation three times: twice with body 0 (a request and
 * its resend after a timeout) and once with body 1 (the key reused for another request).
 * Before the operation runs, each request claims the key in its scope with ONE PutItem
 * (ClientKey.claim):
 *   Put USED#<digest>/CLAIM fingerprint = the body's
 *       [attribute_not_exists(PK) OR fingerprint = :fingerprint OR expires < :now]
 * refused: 422, the operation does not run. Asserted at each claim, as what the guard is for
 * (purpose(), said of ghost flags): one key never runs the operation for two bodies, while
 * the same body runs again (the operation's own token and record then answer as the first).
 * The claim's expiry (a day: a key is bound for that long) is not modelled.
 */

#ifndef IDEMPOTENCY
#define IDEMPOTENCY 0
#endif

byte claim_fp;      /* the claim's fingerprint: 0 none, b + 1 body b's */
bit  body_ran[2];   /* ghost: the operation ran for body b */
byte body_runs;     /* ghost: times the operation ran */

#define G_KEY_CLAIM_FREE  (claim_fp == 0 || claim_fp == r_fp)

#if IDEMPOTENCY

proctype KeyedRequest(byte body) {
	byte r_fp = body + 1;
	atomic {
		if
		:: G_KEY_CLAIM_FREE ->
			claim_fp = r_fp; body_ran[body] = 1; body_runs++;
			purpose(!(body_ran[0] && body_ran[1]))   /* one key, one body */
		:: else -> skip   /* KeyReused: 422 */
		fi;
		printf("keyed request: body %d\n", body)
	}
}

inline start_keys() {
	run KeyedRequest(0);
	run KeyedRequest(0);
	run KeyedRequest(1)
}

#endif
