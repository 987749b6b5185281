-- Users, sessions and exchanges (one row per question and its answer).

CREATE TABLE users (
    id            bigint PRIMARY KEY,          -- Telegram user id; 0 is the local terminal user
    username      text,
    full_name     text,
    role          text NOT NULL DEFAULT 'user' CHECK (role IN ('user', 'admin')),
    status        text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'banned')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_seen_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE sessions (
    id          bigserial PRIMARY KEY,
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    chat_id     bigint NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    ended_at    timestamptz
);
-- At most one open session per user and chat.
CREATE UNIQUE INDEX sessions_one_open ON sessions (user_id, chat_id) WHERE ended_at IS NULL;

CREATE TABLE messages (
    id                  bigserial PRIMARY KEY,
    session_id          bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    user_id             bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    chat_id             bigint NOT NULL,
    question            text NOT NULL,
    answer              text NOT NULL,
    strategy            text NOT NULL CHECK (strategy IN ('quick', 'deep', 'clarify', 'decline')),
    confidence          double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    uncertainty_reason  text,
    tree_id             text,
    error               text,
    started_at          timestamptz NOT NULL,
    finished_at         timestamptz NOT NULL,
    duration_ms         integer GENERATED ALWAYS AS
                          ((extract(epoch FROM finished_at - started_at) * 1000)::integer) STORED,
    prompt_tokens       integer NOT NULL DEFAULT 0,
    completion_tokens   integer NOT NULL DEFAULT 0,
    llm_calls           integer NOT NULL DEFAULT 0
);
CREATE INDEX messages_session ON messages (session_id, id);
CREATE INDEX messages_user_time ON messages (user_id, finished_at);
