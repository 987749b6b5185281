-- Pending clarifications: a clarify decision waiting for the user's answers.
-- At most one active row per chat and user; saving a newer one supersedes the older.
-- Expiry is expires_at compared with the application's clock (see ClarificationStore).

CREATE TABLE clarifications (
    id          text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_-]{8,12}$'),  -- short: callback data
    chat_id     bigint NOT NULL,
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    question    text NOT NULL,                                -- the user's original text
    decision    jsonb NOT NULL,                               -- StrategyDecision
    questions   jsonb NOT NULL DEFAULT '[]',                  -- list of ClarifyingQuestion
    answers     jsonb NOT NULL DEFAULT '[]',                  -- list of text, answers[i] -> questions[i]
    round       integer NOT NULL DEFAULT 1 CHECK (round >= 1),
    status      text NOT NULL DEFAULT 'active'
                CHECK (status IN ('active', 'answered', 'cancelled', 'superseded')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    closed_at   timestamptz,
    CHECK ((status = 'active') = (closed_at IS NULL)),
    CHECK (jsonb_typeof(questions) = 'array' AND jsonb_typeof(answers) = 'array')
);
-- "The newest wins" is enforced here, and the same index serves the active lookup.
CREATE UNIQUE INDEX clarifications_one_active ON clarifications (chat_id, user_id)
    WHERE status = 'active';
