-- The lock audit's candidate findings: one join over the rows of every item read once.
--
-- Over three relations (accounts/audit/rows.py writes them; docs/audit.md defines them over
-- a DynamoDB export for Amazon Athena):
--   held(lock_key, namespace, holder, recorded)  a lock key a live item's values map to
--   locks(lock_key, namespace, owner, damaged, declared)  a live lock item
--   items(pk, damaged, factors)  a live audited item, damaged: a finding of its own;
--               factors: its partition holds second factors (and one row, damaged false,
--               per live credential item or TOTP record of an account's partition)
-- it lists what may be out of step, one row per (subject, lock key, PK):
--   held        an item holds the key, and its lock is absent or names another item or
--               nobody (I2; and I1: of two holders, one at least is not the lock's
--               owner), or the item does not record the key (unrecorded)
--   lock        a lock its owner does not hold (I3), or damaged (malformed)
--   item        an item with damage of its own (invalid, malformed, damaged)
--   factors     a partition holding second factors, confirmed against its credential
--               items and locks (damaged, no_credential, stray_credential)
--   registry    a registry entry whose item is no member, or a member with no entry
--               (over two more relations: registry(registry_name, member), an entry of a
--               registry an audited model keeps, PK=<registry_name>, SK=<member's PK>;
--               members(registry_name, pk), a live audited item belonging in it)
--   undeclared  a namespace no audited model declares: its smallest lock key, and how many
-- Candidates only: each is confirmed with consistent reads of its keys before it is
-- reported (accounts/audit/confirming.py), and what a finding is stays there. Plain SQL
-- (no engine's own function), so it runs unchanged in DuckDB and in Athena (Trino).
WITH declared_locks AS (
    SELECT lock_key, owner
    FROM locks
    WHERE declared
)
SELECT 'held' AS subject, h.namespace, h.lock_key, h.holder AS pk, '' AS detail
FROM held h
LEFT JOIN declared_locks l ON l.lock_key = h.lock_key
WHERE l.owner IS DISTINCT FROM h.holder
   OR NOT h.recorded
UNION ALL
SELECT 'lock' AS subject, l.namespace, l.lock_key, l.owner AS pk, '' AS detail
FROM locks l
LEFT JOIN held h ON h.lock_key = l.lock_key AND h.holder = l.owner
WHERE l.declared AND (h.holder IS NULL OR l.damaged)
UNION ALL
SELECT 'item' AS subject, NULL AS namespace, NULL AS lock_key, i.pk, '' AS detail
FROM items i
WHERE i.damaged
UNION ALL
SELECT DISTINCT 'factors' AS subject, NULL AS namespace, NULL AS lock_key, i.pk, '' AS detail
FROM items i
WHERE i.factors
UNION ALL
SELECT 'registry' AS subject, r.registry_name AS namespace, NULL AS lock_key, r.member AS pk, '' AS detail
FROM registry r
LEFT JOIN members m ON m.registry_name = r.registry_name AND m.pk = r.member
WHERE m.pk IS NULL
UNION ALL
SELECT 'registry' AS subject, m.registry_name AS namespace, NULL AS lock_key, m.pk, '' AS detail
FROM members m
LEFT JOIN registry r ON r.registry_name = m.registry_name AND r.member = m.pk
WHERE r.member IS NULL
UNION ALL
SELECT 'undeclared' AS subject, l.namespace, min(l.lock_key) AS lock_key, NULL AS pk,
       CAST(count(*) AS VARCHAR) AS detail
FROM locks l
WHERE NOT l.declared
GROUP BY l.namespace
ORDER BY lock_key, subject, pk
