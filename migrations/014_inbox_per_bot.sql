-- A message is never taken for another (issue 26). Telegram's update ids are one bot's
-- own sequence, and after a week of silence the next one is random, so an update is
-- keyed by (bot, update id, hash of its body), not by its id alone: another bot's update
-- 5, or a new update that meets an old id, is a new update; the same one delivered again
-- is a no-op.
--
-- Rows stored before this migration belong to bot 0 ("legacy"): SQL cannot know the
-- bot, so the first bot process to start adopts them (storage/inbox.py, adopt_legacy).
-- Replies, leases, rate-limit hits and deep jobs were named after the update ('u42');
-- they are now named after the update's row ('i7'), unique across bots and re-used ids,
-- and the names already written are rewritten here.

-- The body's hash: of the stored jsonb's text (keys sorted, one spacing), so a body that
-- comes by polling or by the webhook hashes the same whatever its key order or spacing.
CREATE FUNCTION whytree_update_hash(body jsonb) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$ SELECT sha256(convert_to(body::text, 'UTF8')) $$;

ALTER TABLE inbox_updates DROP CONSTRAINT inbox_updates_pkey;
ALTER TABLE inbox_updates
    ADD COLUMN id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ADD COLUMN bot_id bigint NOT NULL DEFAULT 0,
    ADD COLUMN payload_hash bytea GENERATED ALWAYS AS (whytree_update_hash(payload)) STORED;
ALTER TABLE inbox_updates ALTER COLUMN bot_id DROP DEFAULT;  -- a new row names its bot
ALTER TABLE inbox_updates
    ADD CONSTRAINT inbox_updates_key UNIQUE (bot_id, update_id, payload_hash);
DROP INDEX inbox_updates_open;
CREATE INDEX inbox_updates_open ON inbox_updates (bot_id, received_at)
    WHERE status IN ('pending', 'processing');

-- The names of what updates left behind, from 'u<update_id>' to 'i<row id>' (update ids
-- were unique until now, so each name has one row).
UPDATE outbox_messages o SET key = 'i' || i.id || ':' || split_part(o.key, ':', 2)
FROM inbox_updates i WHERE split_part(o.key, ':', 1) = 'u' || i.update_id;
UPDATE leases l SET holder = 'i' || i.id FROM inbox_updates i WHERE l.holder = 'u' || i.update_id;
UPDATE rate_hits r SET key = 'i' || i.id FROM inbox_updates i WHERE r.key = 'u' || i.update_id;
UPDATE deep_jobs j SET key = 'i' || i.id FROM inbox_updates i WHERE j.key = 'u' || i.update_id;

-- Retention (INBOX_RETENTION_HOURS): the janitor finds what is older than the horizon.
CREATE INDEX inbox_updates_finished ON inbox_updates (finished_at)
    WHERE status IN ('done', 'failed', 'rejected');
CREATE INDEX outbox_messages_finished ON outbox_messages (created_at)
    WHERE status IN ('sent', 'failed');
CREATE INDEX leases_until ON leases (lease_until);
CREATE INDEX rate_hits_when ON rate_hits (at);
