-- Hypothesis trees of deep analyses: one row per tree, one per node.
-- Node ids are short and unique within their tree ("root", "h1", "h1.v2"), so
-- nodes are keyed by (tree_id, id).

CREATE TABLE trees (
    id          text PRIMARY KEY,
    task        text NOT NULL,
    user_id     bigint,
    chat_id     bigint,
    status      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'completed', 'failed')),
    revision    integer NOT NULL DEFAULT 0,
    synthesis   jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX trees_user_time ON trees (user_id, created_at DESC);
CREATE INDEX trees_time ON trees (created_at DESC);

CREATE TABLE tree_nodes (
    tree_id           text NOT NULL REFERENCES trees (id) ON DELETE CASCADE,
    id                text NOT NULL,
    -- Insertion order: nodes load in the order they were created.
    seq               bigint GENERATED ALWAYS AS IDENTITY,
    parent_id         text,
    node_type         text NOT NULL
                        CHECK (node_type IN ('root', 'hypothesis', 'verification', 'leaf')),
    status            text NOT NULL
                        CHECK (status IN ('pending', 'in_progress', 'completed', 'rejected', 'pruned')),
    title             text NOT NULL DEFAULT '',
    description       text NOT NULL DEFAULT '',
    depth             integer NOT NULL CHECK (depth >= 0),
    prior             double precision NOT NULL CHECK (prior BETWEEN 0 AND 1),
    promise           double precision NOT NULL CHECK (promise >= 0),
    confidence        double precision CHECK (confidence BETWEEN 0 AND 1),
    result            jsonb,
    context           jsonb NOT NULL DEFAULT '{}'::jsonb,
    rejection_reason  text,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tree_id, id),
    FOREIGN KEY (tree_id, parent_id) REFERENCES tree_nodes (tree_id, id)
        DEFERRABLE INITIALLY DEFERRED,
    CHECK ((node_type = 'root') = (parent_id IS NULL))
);
CREATE INDEX tree_nodes_tree ON tree_nodes (tree_id, seq);
