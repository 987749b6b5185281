"""What a question measures, which way it moved, and what kind of thing it names.

Word lists on folded text (see `lexicon.fold`), Russian by stems. They describe
the vocabulary of incident questions, not particular sentences; the kinds of
things (cell, site, service) are those runbooks declare entities of.
"""

from __future__ import annotations

import re

from reasoning_core.understanding.lexicon import words
from reasoning_core.understanding.request import Direction

# fmt: off

#: metric id -> the words that name it.
METRICS: dict[str, re.Pattern[str]] = {
    "traffic": words(
        r"traffic", r"erlangs?", "throughput", "volume", "payload", r"data volume",
        r"трафф?ик\w*", r"траф(?:а|у|ом|е)?", r"эрланг\w*", r"нагрузк\w*", r"объем\w*",
    ),
    "attempts": words(
        r"attempts?", r"calls?", r"sessions?", r"попыт\w*", r"звонк\w*", r"вызов\w*"
    ),
    "availability": words(
        r"availability", r"available", r"unavailable", "outage", r"unreachable",
        r"not (?:answering|responding|reachable)", r"connection refused", r"доступност\w*",
        r"недоступ\w*", r"авари\w*", r"не отвечает", r"не отвечают",
    ),
    "interference": words(r"rtwp", r"interference", r"noise", r"помех\w*", r"шум\w*"),
    "errors": words(
        r"errors?", r"5\d\d'?s?", r"5\d\d-?(?:к|ок|тк|ых|е)\w*", "5xx", r"fail\w*", r"exceptions?",
        # a release that broke something ("did the deploy break checkout?", "v2 сломал
        # чекаут"); "it's broken again" says no measure
        r"(?:break(?:s|ing)?|broke)(?= (?!again\b|down\b)\w)", r"сломал[аио]?(?= \w)",
        r"ошиб\w*", r"отказ\w*",
        r"сбо(?:й|и|ев|ем|ях)",
    ),
    "latency": words(
        "latency", r"slow\w*", r"p9\d", "p50", "response time", r"time[sd]? ?-?outs?",
        "timing out", r"задерж\w*", r"латентн\w*", r"тормоз\w*", r"туп(?:ит|ят|ил\w*)",
        r"медлен\w*", r"таймаут\w*", r"долги[ейм]", r"долгая", r"долго (?:отвеча|выполня)\w*",
        r"время ответа", r"отклик\w*", r"еле (?:отвеча|работа|шевел)\w*",
        r"(?:takes?|taking|took) (?:\S+ )?seconds", r"по (?:несколько|\d+) секунд\w*",
        # a service waiting on its database: "checkout ждёт базу", "web waits on the db"
        r"(?:waits?|waiting) (?:on|for) (?:the |its )?(?:db|database|postgres\w*|sql)",
        r"жд(?:ёт|ет|ут) (?:базу|бд|postgres\w*|постгрес\w*|ответа от базы)",
    ),
    "restarts": words(
        r"restart\w*", r"crash\w*", "oom", r"crash ?loop\w*", r"рестарт\w*", r"перезапуск\w*",
        r"пада(?:ют|ет) поды", r"oom-?kill\w*", r"перезагружа\w*",
    ),
    "saturation": words(
        r"cpu", r"memory", r"mem", r"ram", r"throttl\w*", r"памят\w*", r"оперативк\w*",
        r"процессор\w*",
        r"проц(?:а|ом|у|е)?", r"цпу", r"pegged", r"в полк\w*",
        r"load averages?", "loadavg", r"(?:cpu|host|server|system) load", r"load is",
    ),
}

#: direction -> the words that say it (checked in this order: the first that matches wins).
DIRECTIONS: tuple[tuple[Direction, re.Pattern[str]], ...] = (
    ("rise", words(
        r"increas\w*", r"ris(?:e|es|en|ing)", "rose", r"gr[eo]w(?:s|n|ing|th)?", "higher",
        r"(?:went|go|goes|going) up", r"doubled", r"tripled", r"jump(?:s|ed)?",
        r"вырос\w*", r"раст(?:ет|ут|ёт)", r"рост\w*", r"увелич\w*", r"выше", r"прирост\w*",
        r"вверх", r"больше трафик\w*", r"more traffic", r"upward", r"climb\w*",
        r"поднял\w*", r"прибавил\w*", r"(?:под|воз|при)рос(?:ла|ло|ли)?", r"(?:под|воз)раст\w*",
        r"стал\w* больше", r"больше,? чем (?:обычно|раньше|было|вчера)", r"больше обычного",
        r"more than (?:usual|normal|before|yesterday)", r"went through the roof", "📈",
        r"skyrocket\w*", r"shot up", r"взлетел\w*", r"вырос\w*", r"doubl(?:e|es|ing)",
        r"tripl(?:e|es|ing)", r"busier", r"heavier", r"overload\w*", r"перегруж\w*",
        r"перегруз\w*",
        r"(?:traffic|трафик\w*)(?:'s| is| has| has gone)? (?:way |much |a lot )?up",
        r"в (?:\d|два|две|три|полтора) раза (?:больше|выше|вырос\w*)",
        r"(?:latency|errors?|5xx|cpu|load|p9\d)(?: is| are)? (?:way )?up",
    )),
    ("drop", words(
        r"drop(?:s|ped|ping)?", "fell", r"fall(?:s|ing|en)?", r"declin\w*", r"decreas\w*",
        r"dip(?:s|ped)?", r"plummet\w*", r"tank(?:ed|ing)", r"(?:went|go|goes|going) down",
        "lost", "loss", "lose", r"losing", "lower", "less", "fewer", "low", r"shr[iu]nk\w*",
        # "why did traffic tank", "traffic tanks at night" (a verb, not "a think tank")
        r"(?:did|does|do|will|would|to|might|could|can) (?:\S+ ){0,2}tank",
        r"(?:traffic|throughput|volume|numbers|calls|attempts|kpis?|sales|revenue|usage) tanks?",
        "📉", r"(?:degrad\w*|деград\w*)(?: (?:of|in|по))? (?:traffic|throughput|трафик\w*)",
        r"(?:traffic|throughput|трафик\w*)(?: (?:is|has|was))? (?:been )?(?:degrad|деград)\w*",
        r"collaps\w*", r"halv\w*", "half",
        r"(?:zero|no) traffic",
        r"упа[лд]\w*", r"пада\w*", r"падени\w*", r"просе[лд]\w*", r"проседа\w*", r"просадк\w*",
        r"снизил\w*", r"снижа\w*", r"снижени\w*", r"уменьш\w*", r"сократил\w*", r"обвал\w*",
        r"провал\w*", r"рухн\w*", r"ниже", r"меньше", r"пропа[лд]\w*", r"нет трафик\w*",
        r"ушел", r"ушла", r"ушло", r"потер\w*",
        r"plung\w*", r"nose-?div\w*", r"crater\w*", r"sank", r"sink(?:s|ing)",
        r"стал\w* меньше", r"меньше,? чем (?:обычно|раньше|было|вчера)", r"меньше обычного",
        r"less than (?:usual|normal|before|yesterday)", r"нырнул\w*", r"в ноль",
        r"(?:до|к) нулю", r"траф\w* (?:почти |вообще |совсем )?(?:нет|ноль)", r"вниз",
        r"traffic(?:'s| is| looks| seems)? (?:way |really )?(?:down|low)", r"quiet(?:er)?",
        r"underperform\w*", r"обнул\w*", r"на нуле", r"zero(?:ed|s)? out",
        r"(?:went|go|goes|gone|dropped|fell) to zero", r"(?:not|stopped) carrying",
        r"перет[её]к\w*", r"перетека\w*", r"mov(?:e|ed|es|ing) (?:off|away)", r"просяд\w*",
        r"просед\w*", r"сдулс\w*", r"дропн\w*",
    )),
    ("spike", words(
        r"spik\w*", r"surg\w*", r"burst\w*", r"всплеск\w*", r"подскочи\w*",
        r"(?:по)?сып(?:ал|ет|ят|л)\w*", r"flood\w*", r"pil(?:e|ing) up",
    )),
    ("outage", words(
        "outage", "down", "dead", "offline", r"unreachable", r"not (?:working|responding)",
        r"doesn'?t work", r"isn'?t working", r"лежит", r"лежат", r"легл\w*", r"не работа\w*",
        r"не отвеча\w*", r"умер\w*", r"сдох\w*", r"лег", r"тухн\w*", r"(?:по|за)тух\w*",
        r"flat-?lin\w*", r"(?:went|go|goes|gone|going) dark", r"(?:is|are) dark", r"dead air",
        r"в ауте", r"отвал\w*", r"молчит", r"глух\w*", r"off-?air", r"не пашет",
        r"stopped working", r"перестал\w* работать", r"не светится", r"di(?:e|ed|es|ing)",
        r"(?:is|went|gone|has gone) dead", r"помер\w*", r"скончал\w*",
    )),
    ("any", words(
        r"problems?", r"issues?", r"wrong", r"anomal\w*", r"weird", "broken", r"check",
        r"look at", "ok", "okay", "fine", r"strange", r"healthy", "ок", "окей", "all good",
        "alright", "alive", r"жив(?:а|ой|ая|ое|ы)?",
        r"проблем\w*", r"не так", r"случилось", r"происходит", r"аномал\w*", r"странн\w*",
        r"скач\w*", r"fluctuat\w*", r"jump(?:s|ing)? (?:up and down|around)",
        r"провер\w*", r"глян\w*", r"посмотр\w*", r"в порядке", r"норм\w*", r"acting up",
        r"looks? (?:sick|off|odd)", r"odd", r"чудит", r"барахл\w*",
        # "what's up with X", "whats going on with X", "чё с 10183": asks what the matter is
        r"going on", r"what(?:'s| is)(?: up)? with",
        r"how(?:'s| is| are) (?:\S+ ){1,4}(?:doing|looking|holding up)",
        r"what happened", r"what was (?:up|wrong|going on)",
        r"(?:что|чт?о|чё|че|шо)(?: (?:там|такое|опять|снова|вообще|же|творится|было|стало))* со?"
        r"(?= \S)(?! (?:точки|одной|другой|учетом|тем|этим|того|чего|кем)\b)",
        r"как там",
    )),
)

#: kind -> words that label a name of that kind ("cell 10291", "БС 10291", "site S1003").
KIND_WORDS: dict[str, re.Pattern[str]] = {
    "cell": words(
        r"cells?", r"cell ?ids?", "cellname", "bs", "bts", r"(?:base )?stations?",
        r"[eg]?-?node-?b", "enb", "gnb", r"sectors?", r"сот(?:а|ы|е|у|ой|ам|ах|ка|ку|ке|ки)?",
        "бс", "бтс", r"базов\w* станци\w*", r"станци\w*", r"сектор\w*", r"ячейк\w*", "енб",
        r"нодб\w*", r"[еэ]?нод\w*", r"базовк\w*",
    ),
    "site": words(r"sites?", r"towers?", r"площадк\w*", r"сайт\w*", r"вышк\w*", r"allocation"),
    "service": words(
        r"services?", "svc", r"microservices?", r"apps?", r"application", r"сервис\w*",
        r"микросервис\w*", r"приложени\w*",
    ),
    # The kinds the standard exporters' runbooks take (node_exporter's host, postgres_exporter's
    # instance, process-exporter's group): "the host", "this box", "на хосте", "база".
    "host": words(
        r"hosts?", r"box(?:es)?", r"servers?", r"machines?", r"nodes?", r"vms?", r"хост\w*",
        r"сервер\w*", r"машин(?:а|ы|е|у|ой)?", r"тачк\w*", r"виртуалк\w*",
    ),
    "pg_instance": words(
        r"postgres(?:ql)?", "pg", r"databases?", "db", r"постгре?с\w*", r"баз(?:а|ы|е|у|ой)",
        r"баз\w* данных", "бд", "субд",
    ),
    "process_group": words(r"process(?:es)?", r"process groups?", r"процесс(?:а|ы|ов|е|ом)?"),
}

#: resource -> the words that name it ("what is eating RAM", "кончились коннекты"): a
#: runbook whose keywords the question uses for its resource comes before the others.
RESOURCES: dict[str, re.Pattern[str]] = {
    "cpu": words(
        r"cpu", r"процессор\w*", r"проц", r"цпу", r"load averages?", r"loadavg", r"pegged",
        r"в полк\w*",
    ),
    "memory": words(
        r"memory", r"mem", r"ram", r"oom", r"oom-?kill\w*", r"памят\w*", r"озу", r"оом",
        r"оперативк\w*", r"leak\w*", r"утечк\w*",
    ),
    "disk": words(
        r"disks?", r"space", r"filesystem", r"inodes?", r"диск\w*", r"мест[оа]", r"файлов\w*",
        r"инод\w*",
    ),
    "connections": words(
        r"connections?", r"conns?", r"clients?", r"slots?", r"соединени\w*", r"подключени\w*",
        r"коннект\w*", r"слот\w*", r"клиент\w*",
    ),
    "lock": words(
        r"locks?", r"locked", r"deadlocks?", r"blocked", r"blocking", r"transactions?",
        r"блокир\w*", r"транзакц\w*", r"дедлок\w*",
    ),
    "network": words(r"network", r"proxy", r"сет(?:ь|и|ью)", r"сетев\w*", r"прокси"),
}

#: A question pointing back at an earlier one: "again", "like yesterday", "как вчера".
FOLLOW_UP = re.compile(
    r"(?<!\w)(?:again|once more|one more time|like yesterday|as yesterday|same as yesterday"
    r"|like before|as before|like last time|as last time|same as last time|same as before"
    r"|redo|repeat|как вчера|как и вчера|снова|опять|ещё раз|еще раз|повтори\w*"
    r"|как в прошлый раз|как раньше|то же самое|то же, что)(?!\w)",
    re.IGNORECASE,
)

#: A message saying it is about something else: "separate thing", "unrelated, but",
#: "another question", "forget that", "never mind", "другой вопрос", "не по теме", "забудь".
NEW_TOPIC = re.compile(
    r"(?<![\w-])(?:(?:a |one )?(?:separate|different|unrelated|other|another|side)"
    r" (?:thing|question|topic|issue|subject|matter|note)|new (?:question|topic|subject)"
    r"|unrelated(?: to (?:that|this))?,"
    r"|on (?:a|an)? ?(?:different|other|another|unrelated|separate) note"
    r"|change of (?:topic|subject)|(?:forget|never ?mind|scratch|skip) (?:that|this|it)"
    r"|never ?mind|(?:отдельн|друг|нов|посторонн)\w* (?:вопрос|тем|дел)\w*|не по теме"
    r"|о другом|(?:забудь|забей|проехали|отбой|неважно|не важно)(?: (?:про )?(?:это|то|его))?)"
    r"(?![\w-])"
)

#: A question pointing at something named before it: "why is it dropping", "трафик на ней".
BACK_REFERENCE = words(
    r"it", r"its", r"it's", r"this one", r"that one", r"th(?:is|at|e same) (?:cell|site|sector|bs"
    r"|station|service|one)", r"(?:happen\w*|going on|wrong|up|broken|on|in|at|with) there",
    r"them", r"they", r"она", r"оно", r"они", r"ней", r"нее",
    r"него", r"ним", r"нем", r"них", r"ее", r"его", r"там", r"эт(?:а|о|от|ой|ом|у) (?:сот|бс|станц"
    r"|ячейк|сектор|сервис|площадк)\w*", r"т(?:а|у|ой|от|ом) же", r"по ней", r"на ней",
)

# fmt: on


def metrics_in(folded: str) -> list[str]:
    """Metric ids the question names, in a fixed order."""
    return [metric for metric, pattern in METRICS.items() if pattern.search(folded)]


def metric_phrase_spans(folded: str) -> list[tuple[int, int]]:
    """Where a metric is said in more than one word ("load average", "cpu load"): a word
    inside one is part of the metric, never a name (the process group `load`)."""
    return [
        m.span()
        for pattern in METRICS.values()
        for m in pattern.finditer(folded)
        if " " in m.group(0).strip()
    ]


def direction_in(folded: str) -> Direction | None:
    """Which way the question says something moved, or None.

    A question naming a drop and a rise ("noise went up and traffic went down") is
    about the drop: that is what users ask to explain.
    """
    found = [direction for direction, pattern in DIRECTIONS if pattern.search(folded)]
    if "drop" in found and "rise" in found:
        return "drop"
    return found[0] if found else None


def resources_in(folded: str) -> list[str]:
    """The resources the question names, in a fixed order."""
    return [resource for resource, pattern in RESOURCES.items() if pattern.search(folded)]
