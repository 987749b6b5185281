-- Deep analyses run as durable jobs: a crashed process leaves its job 'running'
-- with an old heartbeat, and the next start-up resumes it from its saved tree.
-- `context` is the PlanningContext (JSONB); `answer` the final Answer (JSONB).

CREATE TABLE deep_jobs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id       bigint NOT NULL,
    chat_id       bigint NOT NULL,
    question      text NOT NULL,
    context       jsonb NOT NULL,
    status        text NOT NULL DEFAULT 'queued'
                    CHECK (status IN ('queued', 'running', 'done', 'failed')),
    tree_id       text REFERENCES trees (id) ON DELETE SET NULL,
    attempts      integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    heartbeat_at  timestamptz,
    answer        jsonb,
    error         text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
-- Claiming looks for queued jobs oldest first; recovery for running ones by heartbeat.
CREATE INDEX deep_jobs_queued ON deep_jobs (created_at) WHERE status = 'queued';
CREATE INDEX deep_jobs_running ON deep_jobs (heartbeat_at) WHERE status = 'running';
CREATE INDEX deep_jobs_user ON deep_jobs (user_id, created_at DESC);
