-- Long-term memory: one row per completed answer, keyed by user, chat and project.
-- In a private chat chat_id = user_id; in a group the same user has a separate memory
-- per group, and nobody ever reads another user's rows.

CREATE TABLE memories (
    id               bigserial PRIMARY KEY,
    user_id          bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    chat_id          bigint NOT NULL,
    project          text NOT NULL DEFAULT 'default' CHECK (length(project) BETWEEN 1 AND 64),
    goal_summary     text NOT NULL,
    outcome_summary  text NOT NULL DEFAULT '',
    strategy         text NOT NULL CHECK (strategy IN ('quick', 'deep', 'clarify', 'decline')),
    confidence       double precision NOT NULL CHECK (confidence BETWEEN 0 AND 1),
    tree_id          text,
    parameters       jsonb NOT NULL DEFAULT '{}'::jsonb CHECK (jsonb_typeof(parameters) = 'object'),
    created_at       timestamptz NOT NULL DEFAULT now(),
    -- Russian and English stems (the russian configuration stems Latin words with the
    -- English stemmer too) plus unstemmed tokens for ids such as "lte-kzn-0042".
    -- The goal weighs more than the outcome; parameter values (cell ids, services)
    -- are searchable as they were typed.
    search           tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('russian'::regconfig, goal_summary), 'A')
        || setweight(to_tsvector('english'::regconfig, goal_summary), 'A')
        || setweight(to_tsvector('simple'::regconfig, goal_summary), 'B')
        || setweight(to_tsvector('russian'::regconfig, outcome_summary), 'C')
        || setweight(to_tsvector('english'::regconfig, outcome_summary), 'C')
        || setweight(jsonb_to_tsvector('simple'::regconfig, parameters, '["string", "numeric"]'), 'B')
    ) STORED
);
-- Every query is restricted to one user, chat and project first: retrieval ranks only
-- that slice (newest first), so its cost does not grow with the other users' rows.
CREATE INDEX memories_owner_time ON memories (user_id, chat_id, project, created_at DESC, id DESC);
-- Full-text search across a slice and ad-hoc searches (admin, memory_search tool).
CREATE INDEX memories_search ON memories USING gin (search);
-- TTL purge (MEMORY_TTL_DAYS).
CREATE INDEX memories_created ON memories (created_at);

-- The current project of a user in a chat; no row means the project "default".
CREATE TABLE user_projects (
    user_id     bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    chat_id     bigint NOT NULL,
    project     text NOT NULL CHECK (length(project) BETWEEN 1 AND 64),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, chat_id)
);
