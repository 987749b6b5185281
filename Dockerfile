# whytree: the Telegram bot. Uses the embedded PostgreSQL unless DATABASE_URL is set.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    WHYTREE_DATA_DIR=/data

# Graphviz and fonts with Cyrillic draw the reasoning tree (without them: its text view).
RUN apt-get update -qq \
    && apt-get install -y -qq --no-install-recommends graphviz fonts-dejavu-core \
    && rm -rf /var/lib/apt/lists/*

RUN useradd --create-home --uid 10001 whytree \
    && mkdir /data && chown whytree:whytree /data

WORKDIR /app
COPY pyproject.toml README.md ./
COPY bot ./bot
COPY reasoning_core ./reasoning_core
COPY storage ./storage
COPY demo ./demo
COPY migrations ./migrations
COPY runbooks ./runbooks
COPY benchmarks ./benchmarks
COPY fake_servers ./fake_servers
RUN pip install .

USER whytree
VOLUME ["/data"]
ENTRYPOINT ["whytree"]
CMD ["run"]
