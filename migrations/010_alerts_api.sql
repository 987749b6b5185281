-- Alerts from Alertmanager and the HTTP API's clients.
--
-- alert_analyses: one deep analysis per distinct runbook + parameters while its alerts
-- fire (the partial unique index makes a second one impossible, however many
-- notifications arrive at once); the queue the alert workers claim from
-- (FOR UPDATE SKIP LOCKED); the Telegram messages its report was posted as, so a
-- resolved notification can edit them. An alert with no runbook gets a row too
-- (runbook NULL), keyed by its fingerprint, so its note is posted once.
CREATE TABLE alert_analyses (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dedup_key     text NOT NULL,
    alertname     text NOT NULL,
    runbook       text,                                -- NULL: no runbook for the alert
    parameters    jsonb NOT NULL DEFAULT '{}',         -- validated runbook parameters
    question      text NOT NULL,                       -- or, without a runbook, the note
    language      text NOT NULL DEFAULT 'en',
    chats         bigint[] NOT NULL,
    status        text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'posted', 'failed')),
    attempts      integer NOT NULL DEFAULT 0,
    heartbeat_at  timestamptz,
    answer        jsonb,
    report_html   text,                                -- the first message, for the edit
    messages      jsonb NOT NULL DEFAULT '[]',         -- [{"chat_id": .., "message_id": ..}]
    resolved_at   timestamptz,
    resolved_posted boolean NOT NULL DEFAULT false,
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX alert_analyses_open ON alert_analyses (dedup_key) WHERE resolved_at IS NULL;
CREATE INDEX alert_analyses_queued ON alert_analyses (created_at) WHERE status = 'queued';
CREATE INDEX alert_analyses_running ON alert_analyses (heartbeat_at) WHERE status = 'running';

-- One row per alert (Alertmanager's fingerprint): which analysis it belongs to, and
-- whether it is resolved. A firing notification for a known, unresolved fingerprint
-- starts nothing.
CREATE TABLE alert_fingerprints (
    fingerprint   text PRIMARY KEY,
    analysis_id   bigint NOT NULL REFERENCES alert_analyses (id) ON DELETE CASCADE,
    starts_at     timestamptz,
    last_seen_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at   timestamptz
);
CREATE INDEX alert_fingerprints_analysis ON alert_fingerprints (analysis_id);

-- API keys: only a SHA-256 of the key is stored; the key itself is shown once.
CREATE TABLE api_keys (
    id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                text NOT NULL UNIQUE,
    key_hash            text NOT NULL UNIQUE,
    user_id             bigint NOT NULL,   -- whose access rules and budgets apply
    rate_limit_per_min  integer NOT NULL DEFAULT 60 CHECK (rate_limit_per_min >= 0),
    created_by          bigint,
    created_at          timestamptz NOT NULL DEFAULT now(),
    revoked_at          timestamptz
);

-- Asynchronous API questions: status, progress line and the final Answer.
CREATE TABLE api_jobs (
    id          text PRIMARY KEY,
    key_id      bigint NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    question    text NOT NULL,
    status      text NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'done', 'failed')),
    progress    text NOT NULL DEFAULT '',
    answer      jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
