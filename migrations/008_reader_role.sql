-- The reader role: every tool query (runbook or LLM) runs as whytree_reader, which may
-- only SELECT the data schemas (TOOLS_SQL_SCHEMAS, `demo` by default). It owns nothing,
-- inherits nothing, is no superuser and reads none of the bot's own tables.
--
-- It is a LOGIN role without a password: where the server trusts local connections (the
-- embedded PostgreSQL) the tool pool logs in as it, so the session itself is the reader
-- and no RESET ROLE can lead back to the bot's user. Elsewhere the bot's user switches to
-- it per transaction (SET LOCAL ROLE), hence the membership granted below.
--
-- Roles belong to the whole server. A user without CREATEROLE cannot create it: the
-- migration then only says so, and start-up reports that the SQL tool is off unless
-- TOOLS_SQL_DSN names a read-only role.

DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'whytree_reader') THEN
        BEGIN
            CREATE ROLE whytree_reader LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOINHERIT
                NOREPLICATION NOBYPASSRLS;
        EXCEPTION
            WHEN duplicate_object OR unique_violation THEN
                NULL;  -- another database of this server created it a moment ago
            WHEN insufficient_privilege THEN
                RAISE NOTICE 'whytree_reader not created: % lacks CREATEROLE', current_user;
                RETURN;
        END;
    END IF;
    IF NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        BEGIN
            EXECUTE format('GRANT whytree_reader TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege OR invalid_grant_operation THEN
            RAISE NOTICE 'whytree_reader: % cannot switch to it (SET ROLE)', current_user;
        END;
    ELSE
        -- The role list is nobody's business but the administrators': the reader (and any
        -- other ordinary role of this database) gets "permission denied" for it.
        REVOKE SELECT ON pg_catalog.pg_roles, pg_catalog.pg_user FROM PUBLIC;
        EXECUTE format('GRANT SELECT ON pg_catalog.pg_roles, pg_catalog.pg_user TO %I',
                       current_user);
    END IF;
END
$$;

-- USAGE and SELECT on the data schemas, for tables there now and created later by the
-- caller (the demo loader recreates its schema and calls this again). Runs at every
-- start-up with TOOLS_SQL_SCHEMAS; does nothing without the role or for a missing schema.
CREATE FUNCTION whytree_grant_reader(schemas text[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    s text;
BEGIN
    IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'whytree_reader') THEN
        RETURN;
    END IF;
    FOREACH s IN ARRAY schemas LOOP
        IF s = 'public' OR s LIKE 'pg\_%' OR s = 'information_schema' THEN
            RAISE EXCEPTION 'schema % holds no data for tools; it is never granted', s;
        END IF;
        IF EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = s) THEN
            EXECUTE format('GRANT USAGE ON SCHEMA %I TO whytree_reader', s);
            EXECUTE format('GRANT SELECT ON ALL TABLES IN SCHEMA %I TO whytree_reader', s);
            EXECUTE format(
                'ALTER DEFAULT PRIVILEGES IN SCHEMA %I GRANT SELECT ON TABLES TO whytree_reader',
                s);
        END IF;
    END LOOP;
END
$$;
REVOKE ALL ON FUNCTION whytree_grant_reader(text[]) FROM PUBLIC;
