-- Administration: allowlist and ban details on users, the audit trail of admin
-- actions, and token usage per user and day (recorded from the LLM's usage fields).

ALTER TABLE users
    ADD COLUMN allowed            boolean NOT NULL DEFAULT false,  -- ACCESS_MODE=allowlist
    ADD COLUMN ban_reason         text,
    ADD COLUMN status_changed_at  timestamptz,
    ADD COLUMN status_changed_by  bigint;                          -- the admin's user id

CREATE TABLE audit_entries (
    id          bigserial PRIMARY KEY,
    admin_id    bigint NOT NULL,                -- who (Telegram user id)
    chat_id     bigint,                         -- where the command was given
    action      text NOT NULL,                  -- what: the command without the slash
    args        text NOT NULL DEFAULT '',       -- its arguments as typed
    outcome     text NOT NULL DEFAULT '',       -- what happened ("banned 42", "refused: ...")
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_entries_time ON audit_entries (created_at DESC, id DESC);

CREATE TABLE usage_days (
    user_id            bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    day                date NOT NULL,           -- UTC
    prompt_tokens      bigint NOT NULL DEFAULT 0 CHECK (prompt_tokens >= 0),
    completion_tokens  bigint NOT NULL DEFAULT 0 CHECK (completion_tokens >= 0),
    llm_calls          integer NOT NULL DEFAULT 0 CHECK (llm_calls >= 0),
    PRIMARY KEY (user_id, day)
);
CREATE INDEX usage_days_day ON usage_days (day);
CREATE INDEX messages_time ON messages (finished_at);
