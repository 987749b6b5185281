-- Exactly-once delivery across crashes and replicas (issue 15).
--
-- inbox_updates: every Telegram update, stored before it is acknowledged (keyed by
-- update_id, so a redelivery is a no-op). A process claims one (FOR UPDATE SKIP
-- LOCKED) under a short lease it keeps renewing; a lease that runs out belongs to a
-- dead process and any live one takes the update over.
CREATE TABLE inbox_updates (
    update_id    bigint PRIMARY KEY,
    payload      jsonb NOT NULL,
    chat_id      bigint,
    status       text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'processing', 'done', 'failed', 'rejected')),
    attempts     integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    lease_until  timestamptz,
    owner        text,
    error        text,
    received_at  timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
CREATE INDEX inbox_updates_open ON inbox_updates (received_at)
    WHERE status IN ('pending', 'processing');

-- outbox_messages: every reply, written before it is sent and marked sent after. The
-- key names the reply (update 42's second message: 'u42:1'), so processing an update
-- again after a crash re-sends only what never reached Telegram.
CREATE TABLE outbox_messages (
    key         text PRIMARY KEY,
    chat_id     bigint,
    method      text NOT NULL,
    request     jsonb NOT NULL,
    status      text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sent', 'failed')),
    attempts    integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    result      jsonb,
    error       text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz
);
CREATE INDEX outbox_messages_pending ON outbox_messages (created_at) WHERE status = 'pending';

-- leases: "at most N holders of (scope, name)" across every process: one question per
-- chat (scope 'chat', N = 1), deep-analysis slots per user (scope 'deep'). A holder
-- that dies stops renewing and its lease runs out.
CREATE TABLE leases (
    scope        text NOT NULL,
    name         text NOT NULL,
    holder       text NOT NULL,
    lease_until  timestamptz NOT NULL,
    PRIMARY KEY (scope, name, holder)
);
CREATE INDEX leases_holder ON leases (holder);

-- rate_hits: questions per user for RATE_LIMIT_PER_MIN, shared by every replica; the
-- key (the update's) makes a re-processed update count once.
CREATE TABLE rate_hits (
    user_id  bigint NOT NULL,
    key      text NOT NULL,
    at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, key)
);
CREATE INDEX rate_hits_at ON rate_hits (user_id, at);

-- A deep job started by an update carries that update's key: processing the update
-- again continues the same job (or returns its stored answer) instead of a new one.
ALTER TABLE deep_jobs ADD COLUMN key text UNIQUE;
