"""Word lists of the heuristic strategy rules, as compiled regular expressions.

All patterns run on folded text (lower case, "ё" -> "е", see `fold`). Russian words
are matched by stems (``упа[лд]\\w*`` covers упал, упала, упало, упадёт), so the rules
describe kinds of questions, not particular sentences.
"""

from __future__ import annotations

import re


def words(*alternatives: str, hyphen_bound: bool = True) -> re.Pattern[str]:
    """A pattern matching any alternative as whole words (stems carry their own \\w*).

    With `hyphen_bound` a hyphen also joins words, so "api" is not found in "payments-api".
    """
    edge = r"[\w-]" if hyphen_bound else r"\w"
    return re.compile(rf"(?<!{edge})(?:" + "|".join(alternatives) + rf")(?!{edge})")


#: Typographic apostrophes phones put in ("what’s", "doesn’t") read as the plain one.
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u00b4": "'"})
#: Contractions typed without the apostrophe ("whats", "doesnt", "isnt", "cant"); "its"
#: and "wont" stay, they are words of their own.
_BARE_CONTRACTION = re.compile(
    r"(?<![\w'-])(?:(what|that|there|how|where|who|here)s"
    r"|(do|does|did|is|are|was|were|has|have|had|could|should|would|ca|must)nt)(?![\w'-])"
)


#: Chat shorthands written out: "w/ 10331" -> "with 10331", "w/o" -> "without".
_SHORTHANDS = (
    (re.compile(r"(?<![\w/])w/o(?![\w/])"), "without"),
    (re.compile(r"(?<![\w/])w/(?=\s*\w)"), "with "),
)


def fold(text: str) -> str:
    """Lower-case, unify "ё", dashes and apostrophes, put back the apostrophe of a
    contraction typed without it, write out chat shorthands ("w/"), collapse whitespace:
    the form every rule reads."""
    folded = text.casefold().translate(_APOSTROPHES)
    folded = folded.replace("ё", "е").replace("—", " - ").replace("–", " - ")
    folded = _BARE_CONTRACTION.sub(_contracted, folded)
    for shorthand, written in _SHORTHANDS:
        folded = shorthand.sub(written, folded)
    return " ".join(folded.split())


def _contracted(m: re.Match[str]) -> str:
    return f"{m.group(1)}'s" if m.group(1) else f"{m.group(2)}n't"


# The word lists below are packed by hand, several alternatives a line, for reading.
# fmt: off

# --- quick: small talk, thanks, the bot itself, definitions, how-to -----------------

GREETING = re.compile(
    r"^(?:hi|hello|hey|hiya|yo|howdy|greetings|good (?:morning|afternoon|evening|night|day)"
    r"|привет\w*|здравствуй\w*|здрасьте|добр(?:ое|ый|ого) (?:утр\w*|дн\w*|день|вечер\w*)"
    r"|доброй ночи|салют|хай|хелло)(?![\w-])"
)
THANKS = words(
    r"thanks?", "thx", "ty", "thank you", "cheers", "appreciated?", "much obliged",
    r"спасиб\w*", r"благодар\w*", "спс", r"пасиб\w*", "мерси",
)
ACKNOWLEDGEMENT = re.compile(
    r"^(?:ok|okay|k|got it|cool|great|nice|perfect|understood|sure|fine|i see|noted"
    r"|понятно|ясно|ок|окей|хорошо|отлично|ладно|супер|принято|понял\w*)(?![\w-])"
)
SMALL_TALK = words(
    "how are you", r"how's it going", "how is it going", r"what's up(?! with)", "joke", "как дела",
    r"как (?:ты|у тебя дела|поживаешь)", r"анекдот\w*", r"шутк\w*", "пошути",
)
ABOUT_BOT = words(
    r"(?:who|what) are you", r"what can you do", r"what do you (?:do|know|support)",
    r"your name", r"are you (?:a |an )?(?:bot|human|robot|ai|person|real)",
    r"how do you (?:work|decide|choose|think|pick|know)", r"what languages do you \w+",
    r"^help[.!?]*$",
    "/help", "/start", r"about yourself", r"кто ты\w*",
    r"что ты (?:умеешь|можешь|такое|знаешь)", r"как тебя зовут",
    r"ты (?:бот|человек|робот|ии)", r"как ты (?:работаешь|решаешь|выбираешь|думаешь)",
    r"тво(?:й|я|е|и|его|ей) (?:выбор|работ\w*|возможност\w*|умени\w*)", r"о себе",
    r"^помощь[.!?]*$",
    r"на каких языках",
    r"why (?:do|did|would|are|were|have) you (?:need|want|ask|say|said|answer|pick|choose|chose"
    r"|decide|use|show|mention|keep|think that)\w*", r"зачем тебе",
    r"(?:почему|зачем|отчего) ты (?:так |это |опять )?(?:ответил|сказал|написал|решил|спросил"
    r"|выбрал|посчитал|спрашиваешь|просишь|показал|предлагаешь|думаешь, что)\w*",
)
DEFINITION = re.compile(
    r"^(?:what|what's) (?:is|are|does|do) (?:a |an )?[\w\s.-]{1,40}?(?:mean|stand for)\b"
    r"|^(?:what|what's) (?:is|are) (?:a|an) "
    r"|^(?:what|what's) (?:is|are) (?!(?:the |an? )?(?:problem|issue|matter|deal|status"
    r"|situation|wrong|going on|happening|up|cause|reason)\b)(?:an? |the )?(?:[\w.-]+ ){0,2}"
    r"[\w.-]+(?: exactly| again| actually| anyway)?\??$"
    r"|^what's (?!(?:the |an? )?(?:problem|issue|matter|deal|status|situation|wrong|going on"
    r"|happening|up|with|cause|reason|behind)\b)(?:an? |the )?[a-z][\w.-]*\??$"
    r"|^define\b|\bstands? for\b|\bdefinition of\b|\bdifference between\b"
    r"|\bwhat does [\w\s.'\"«»-]{1,40} mean\b|^explain (?:what|the meaning|the difference)\b"
    r"|^(?:объясни|поясни)\w*,? (?:что|чем)\b"
    r"|что (?:такое|значит|означает|обозначает)|\bрасшифр\w*|\bв чем разница\b"
    r"|\bчем отлича\w*|\bразниц\w* между\b"
)
#: A question about causes or kinds in general, not about an incident: "какие вообще бывают
#: причины падения трафика", "what are common causes of a drop", "what can cause 5xx".
#: A name in the question still makes it a diagnosis (the parse links names first).
IN_GENERAL = re.compile(
    r"\b(?:какие|какая|какой)\b.{0,30}\b(?:бывают|бывает|могут быть|может быть)\b"
    r"|\b(?:из-за чего|от чего|отчего)\b.{0,30}\b(?:бывает|бывают|может|могут)\b"
    r"|\b(?:в общем|в целом|обычно|как правило|типичн\w*|частые|распространённ\w*"
    r"|распространенн\w*|возможные)\s+(?:\w+\s+)?(?:причин\w*|поводы)\b"
    r"|\b(?:common|typical|usual|possible|general|main)\s+(?:causes|reasons)\b"
    r"|^what (?:can|could|might|usually|typically|generally) (?:cause|causes|lead to)\b"
    r"|\bin general\b.{0,30}\b(?:causes?|reasons?)\b"
    # said to be general: "general question: what usually causes ...", "теоретический вопрос"
    r"|\b(?:general|generic|theoretical|hypothetical|abstract) question\b|\bgenerally speaking\b"
    r"|\b(?:общий|теоретическ\w*|абстрактн\w*) вопрос\b|\bв общем случае\b"
    r"|\bwhat (?:can|could|might|usually|typically|generally) (?:cause|causes|lead to)\b"
)
#: Words people put before the question itself: "wait, what is RTWP", "слушай, что такое ...".
LEAD_IN = re.compile(
    r"^(?:(?:wait|hmm+|h?um+|uh+|oh|ah|ok(?:ay)?|so|well|btw|by the way|also|and|actually"
    r"|quick question|one more thing|sorry|hey|hi|hello|guys|folks|team|ps|p\.s\.|@\w+"
    r"|ignore that|forget (?:it|that)|never ?mind|nvm|scratch that|забудь\w*|забей|неважно"
    r"|проехали"
    r"|слушай\w*|кстати|стоп|погоди|подожди|хм+|эм+|а|и|ну|так|ладно|ок|окей|вопрос"
    r"|извини\w*|ребят\w*|коллеги|привет\w*|еще вопрос|и еще)(?:[\s,.!:;-]+|\s*-\s*))+(?=\S)"
)
HOW_TO = re.compile(
    r"^(?:how (?:do|can|should|would) (?:i|we|one|you)|how to|what(?:'s| is) the best way)\b"
    r"|^how (?:does|do|is|are) [\w\s.-]{1,40} (?:work|works|implemented|calculated)\b"
    r"|^(?:как|каким образом|какой командой|какую команду|где)\b"
)

# --- diagnostic: causes, analysis, symptoms ----------------------------------------

#: Asking why a thing matters, not why something happened: "what's RTWP and why does it
#: matter", "зачем это нужно". Read away before the causal words and definitions.
SIGNIFICANCE = re.compile(
    r",? ?(?:and )?why (?:does|do|would|should|is|are) (?:it|this|that|they|these|those) "
    r"(?:matter|important)\b\??|,? ?(?:and )?why (?:it|this|that) matters\b\??"
    r"|,? ?(?:и )?(?:почему|зачем) (?:это|он[аио]?) (?:важн\w*|нужн\w*)\??"
)
CAUSAL = words(
    "why", r"what caused", r"causes?d?", r"reasons?", r"root[ -]cause", "how come",
    r"what(?:'s| is) behind", r"what led to", r"responsible for", "почему", "отчего", "откуда",
    r"из-за чего", r"причин\w*", r"в чем (?:дело|проблема)", r"с чем связан\w*",
    r"что (?:повлияло|вызвало)",
    # what a stalled part waits on is its cause: "what's pg waiting on?", "чего ждёт база?"
    r"what(?:'s| is| are) (?:\S+ ){0,3}waiting (?:on|for)", r"waiting on what",
    r"чего (?:\S+ )?(?:ждёт|ждет|ждут)", r"(?:на )?ч[её]м (?:\S+ )?(?:висит|висят|ждёт|ждет)",
)
ANALYTIC = words(
    r"investigate\w*", r"diagnos\w*", r"troubleshoot\w*", "debug", r"analy[sz]\w*",
    r"find out", r"figure out", r"look into", r"dig into", "explain the", r"разбер\w*",
    r"выясн\w*", r"расслед\w*", r"проанализ\w*", r"анализ\w*", r"продиагност\w*",
    r"диагност\w*", r"объясни (?:падени|рост|всплеск|провал|просадк)\w*",
)
COMPARE = words(r"compare\w*", r"comparison", r"versus", "vs", r"сравни\w*", r"сравнени\w*")
EXPLAIN = words(
    r"explain\w*", "why", r"differen\w*", r"объясни\w*", "почему", r"разниц\w*", r"отлич\w*"
)
VAGUE_INCIDENT = re.compile(
    r"what(?:'s| is) (?:going on|happening|wrong)|what (?:happened|went wrong)"
    r"|something(?:'s| is)? (?:wrong|off|broken|weird|not right)|is everything (?:ok|fine)"
    r"|что (?:случилось|произошло|происходит|не так|сломалось|за фигня|там)"
    r"|что-то (?:не так|сломал\w*|странное|подозрительное|необычное)|все ли (?:в порядке|ок)"
    # a health check: "is anything wrong with web?", "с web всё нормально?", "проверь хост"
    r"|(?:anything|something) (?:wrong|broken|off|odd|suspicious|weird|strange|unusual)"
    r" (?:with|on|in|going on)\b"
    r"|\b(?:is|are|was) (?:\S+ ){1,3}(?:ok|okay|fine|healthy|alright|all right)\b"
    r"|\b(?:check|health-?check) (?:on )?(?:the )?(?:host|box|server|service|database|db|web)"
    r"|(?<![\w-])все (?:ли )?(?:ок|окей|норм|нормально|хорошо|в порядке|живо|работает)\b"
    r"|(?<![\w-])провер(?:ь|ьте|ить) (?:\S+ )?(?:хост|сервер|сервис|базу|бд|web|postgres)"
)
#: The on-call chat's health question: "anything on fire?", "all good on prod?", "как там
#: прод?", "есть сейчас проблемы?" (a checkup; not when it is thanks or small talk).
HEALTH = re.compile(
    r"\b(?:anything|something|smth|stuff) (?:on fire|burning|broken|wrong|down|off|red|weird"
    r"|odd|strange|unusual|funny|bad)\b"
    r"|\b(?:all|everything|things|stuff) (?:good|ok|okay|fine|well|green|alright)\b"
    r"|\bany (?:problems?|issues?|incidents?|fires?|trouble|alerts?)\b"
    r"|\b(?:are|r) (?:we|u|you|things) (?:good|ok|okay|fine|alright)\b"
    r"|(?<![\w-])как (?:там|дела|поживает|себя чувствует) (?:на |у |с |в )?(?:прод\w*|продакшн\w*"
    r"|систем\w*|инфр\w*|хост\w*|сервер\w*|баз\w*|бд|сервис\w*|web|postgres\w*)"
    r"|(?<![\w-])есть (?:ли )?(?:сейчас |щас |сегодня |где-?то |где-?нибудь )?"
    r"(?:какие-?(?:то|нибудь) )?"
    r"(?:проблем\w*|инцидент\w*|пожар\w*|алерт\w*)"
    # the other order: "проблемы есть сейчас?", "алерты есть?"
    r"|(?<![\w-])(?:проблем\w*|инцидент\w*|пожар\w*|алерт\w*) (?:\S+ )?есть\b"
    r"|(?<![\w-])все (?:ли )?(?:жив\w*|цел\w*|ок|окей|норм\w*|в порядке|хорошо|работает)\b"
    r"|(?<![\w-])что-?(?:то|нибудь) (?:горит|горящ\w*|упало|сломалось|лежит|не так)"
    # "is web up?", "is the db alive or not?", "web жив?"
    r"|\b(?:is|are) (?:\S+ ){1,2}(?:up|alive|running|reachable|responding)\b(?! (?:to|with|for))"
    r"|(?<![\w-])(?:жив(?:а|ой|ая|ое|ы)?|работает|отвечает) (?:ли|или нет)\b"
)
#: Asking what the matter is with something: "what's with X", "how's 10291 doing", "что с
#: 10219", "чё там с сотой", "как там 10291" — an incident question only when X is a name or
#: a thing one diagnoses ("how are you doing", "что с погодой" are not).
VAGUE_ABOUT = re.compile(
    r"what(?:'s| is)(?: (?:up|going on|the (?:matter|deal|story|problem)))? with\b"
    r"|how(?:'s| is| are) (?:\S+ ){1,4}(?:doing|looking|holding up)\b"
    r"|(?<![\w-])(?:что|чт?о|чё|че|шо)(?: (?:там|такое|опять|снова|вообще|же|творится|было"
    r"|стало))* со? "
    r"(?!(?:точки|одной|другой|учетом|тем|этим|того|чего|кем|ним делать|этим делать)\b)"
    r"|(?<![\w-])как там\b"
)
#: Words for the bot or for people, about whom "how are you doing" asks no incident.
PERSONAL = words(
    "you", "your", "we", "us", "everyone", "everybody", "guys", "ты", "тебя", "тебе", "тобой",
    "вы", "вас", "мы", "нас", "ребята",
)
SYMPTOM_EN = words(
    r"drop(?:s|ped|ping)?", "fell", r"fall(?:s|ing)?", r"declin\w*", r"decreas\w*",
    r"dip(?:s|ped)?", r"plummet\w*", r"tank(?:ed|ing)", r"(?:went|go|goes|going) down", "lost",
    "loss", r"spik\w*", r"surg\w*", r"jump(?:s|ed)?", r"increas\w*",
    r"(?:went|go|goes|going) up", r"grow(?:s|ing|n)?", "grew", r"climb(?:s|ed|ing)?",
    r"creep(?:s|ing)?", "crept", r"ris(?:e|es|ing)", "rose",
    r"doubled", r"tripled", r"doubl(?:e|es|ing)", r"busier", r"overload\w*", r"errors?",
    r"5\d\d'?s?", "5xx", "4xx", r"fail\w*", r"crash\w*",
    r"restart(?:s|ed|ing)", "oom", r"exceptions?", r"time[sd]? ?-?outs?", "timing out",
    "latency", r"slow\w*", r"lag(?:s|gy|ging)?", r"sluggish", r"hang(?:s|ing)?", r"freez\w*",
    "outage", "down", "unavailable", "unreachable", "offline", "broken", "broke",
    r"not (?:working|responding|answering|opening|loading|available)",
    r"(?:doesn't|does not|won't|wont"
    r"|can't|cannot|isn't|is not) (?:work|respond|open|load|start|connect|accept|take)\w*",
    r"degrad\w*", r"anomal\w*", r"leak\w*", "packet loss", "stuck", r"flapp\w*", r"saturat\w*",
    r"throttl\w*", "complain", "complaints", r"high (?:cpu|load|latency)", "on fire",
    r"incidents?", r"burning", r"flat-?lin\w*", r"(?:went|go|goes|gone|going) dark",
    r"plung\w*", r"crater\w*", r"nose-?div\w*", "sank", "dead", r"skyrocket\w*", "shot up",
    r"di(?:e|ed|es|ing)", "📉", "📈",
    r"tank(?:s|ed|ing)?", r"(?:problems?|issues?|trouble) (?:with|on|in|at)",
    r"(?:zero|no) (?:traffic|requests|data|calls|orders|users|connections)",
    # the exporters' words, as on-call engineers type them
    r"kill(?:ed|s|ing)?", r"oom-?kill\w*", "full", r"no (?:space|room|free)",
    r"out of (?:memory|space|disk|inodes|connections|slots|file descriptors)",
    r"too many (?:clients|connections|open files)", r"eat(?:s|ing)", r"hog(?:s|ging)?",
    r"through the roof", r"maxed(?: out)?", r"pegged", r"at 100 ?%?", r"refus\w*", r"crawl\w*",
    r"(?:not|stopped|isn't|is not) answering", r"unresponsive", r"keeps? restarting",
    r"crash ?-?loop\w*", r"flaky", r"blocked", r"locked", r"overheat\w*", r"break(?:s|ing)?",
    r"(?:hold\w*|waiting (?:on|for)|stuck (?:on|behind)) (?:a |an |the )?(?:\w+ )?locks?",
    r"deadlock\w*", r"lock (?:waits?|contention|timeouts?)",
    # time said as the symptom: "commits take seconds", "queries take forever"
    r"(?:takes?|taking|took) (?:\S+ )?(?:seconds|minutes|forever|ages|too long)",
)
SYMPTOM_RU = words(
    r"упа[лд]\w*", r"пада\w*", r"падени\w*", r"просе[лд]\w*", r"проседа\w*", r"просадк\w*",
    r"снизил\w*", r"снижени\w*", r"уменьшил\w*", r"сократил\w*", r"обвал\w*", r"провал\w*",
    r"рухн\w*", r"всплеск\w*", r"скач\w*", r"подскочи\w*", r"вырос\w*", r"раст(?:ет|ут)",
    r"рост\w*", r"увеличил\w*", r"ошиб\w*", r"5\d\d\w*", "5xx", r"таймаут\w*", r"тайм-аут\w*",
    r"задерж\w*", r"тормоз\w*", r"туп(?:ит|ят|ил\w*)", r"медлен\w*", "долго",
    r"долги[ейм]", r"долгая", r"лаг\w*", r"вис(?:ит|нет|ят)",
    r"завис\w*", r"авари\w*", r"недоступ\w*", r"лежит|лежат|лег|легл\w*",
    r"не (?:работа|отвеча|открыва|грузит|загружа|запуска|подключа)\w*", r"слома\w*",
    r"глюч\w*", r"деград\w*", r"помер\w*", r"умер\w*", r"сдох\w*", r"аномал\w*",
    r"утечк\w*", r"потер\w*", r"сбо(?:й|и|ев|ем|ях)",
    r"отказ(?:ы|ов|ами)?", r"рестарт\w*", r"перезапуска\w*", r"нагрузк\w*", r"жалу\w*",
    r"инцидент\w*", r"гор(?:ит|им|ят)", r"пожар\w*", r"плохо", r"хуже", r"нулев\w*",
    r"нет (?:трафик|данны|запрос|звонк|заказ|пользовател|соединени)\w*",
    r"тухн\w*", r"(?:по|за)тух\w*", r"отвал\w*", r"молчит", r"(?:по)?сып(?:ал|ет|ят|л)\w*",
    r"в ауте", r"просяд\w*", r"взлетел\w*", r"(?:под|воз|при)рос(?:ла|ло|ли)?", r"нырнул\w*",
    r"сдулс\w*", r"не пашет", r"глюк\w*", r"перегру[жз]\w*", r"жр(?:ет|ут|ал\w*)",
    r"куша(?:ет|ют)", r"съ(?:ел|ела|ели|едает|едают)",
    r"(?:проблем\w*|неполад\w*|неисправн\w*) (?:с|со|на|в|у)",
    # the exporters' words, as on-call engineers type them
    # a resource running out ("кончилось место", "коннекты исчерпаны"), not a shift ending
    r"(?:кончил|законч|исчерпа)\w* (?:\w+ )?(?:мест|памят|коннект|соединени|подключени|слот"
    r"|диск|инод|дескриптор|ресурс)\w*",
    r"(?:мест|памят|коннект|соединени|подключени|слот|инод|дескриптор)\w* (?:\w+ )?"
    r"(?:кончил|законч|исчерпа)\w*",
    r"забит\w*", r"нет (?:\w+ )?места", r"места (?:\w+ )?нет", r"не хватает (?:\w+ )?места",
    r"переполн\w*",
    r"убил\w*", r"убит\w*", r"убива\w*", r"теч(?:ет|ем|ут)", r"утека\w*",
    r"еле (?:отвеча|работа|шевел|дыш|жив)\w*", r"не пуска\w*", r"не (?:принима|пуска)\w*",
    r"под потолок", r"на (?:100|сто) ?%", r"в полк\w*", r"гре(?:ет|ют|ется|ются)\w*",
    r"перезагружа\w*", r"блокир\w*", r"блокиров\w*", r"ждет", r"ждут",
)
DOMAIN = words(
    r"traffic", r"services?", r"servers?", r"hosts?", r"cells?", r"sites?", "database", "db",
    r"postgres(?:ql)?", r"disks?", r"memory", "cpu", r"process(?:es)?", r"connections?",
    r"баз(?:а|ы|е|у|ой)", r"постгре?с\w*", r"диск\w*", r"памят\w*", r"процесс\w*",
    r"коннект\w*", r"подключени\w*", r"соединени\w*",
    r"apis?", r"apps?", r"application", r"queues?", r"deploy\w*", r"releases?", r"clusters?",
    r"network", r"users?", r"conversions?", r"orders?", r"revenue", r"sales", r"signups?",
    r"metrics?", r"numbers", r"kpis?", r"dashboards?", r"alerts?", r"requests?",
    "response time", "availability", r"трафик\w*", r"сервис\w*", r"сервер\w*", r"хост\w*",
    r"сот(?:а|ы|е|у|ой|ам|ах)", r"сайт\w*", r"баз\w* данных", "бд", r"приложени\w*",
    r"очеред\w*", r"деплой\w*", r"релиз\w*", r"кластер\w*", r"сет(?:ь|и|ью|ях|ей)",
    r"пользовател\w*",
    r"конверси\w*", r"заказ\w*", r"выручк\w*", r"продаж\w*", r"регистрац\w*", r"метрик\w*",
    r"цифр\w*", r"показател\w*", r"дашборд\w*", r"алерт\w*", r"запрос\w*", r"время ответа",
    r"доступност\w*", r"prod(?:uction)?", r"прод\w*", r"shop", r"infra\w*", r"инфр\w*",
    r"систем\w*", "bs", "bts", "enb", "gnb", r"[eg]?-?node-?b", r"(?:base )?stations?",
    r"sectors?", "бс", "бтс", "енб", r"станци\w*", r"сектор\w*", r"ячейк\w*", r"базовк\w*",
)
TIME_HINT = words(
    r"since", r"yesterday", r"today", r"tonight", r"this (?:morning|week|month|evening)",
    r"last (?:night|week|hour|month|day|\d+ \w+)", r"ago", r"overnight", r"hours?",
    r"minutes?", r"(?:mon|tues|wednes|thurs|fri|satur|sun)day", r"\d{1,2}:\d{2}",
    r"\d{1,2} ?(?:am|pm)", r"\d{4}-\d{2}-\d{2}", r"\d{1,2}\.\d{1,2}(?:\.\d{2,4})?",
    r"after (?:the )?(?:deploy|release|update)\w*", r"at noon", r"midnight", r"вчера",
    r"сегодня", r"с утра", r"утром", r"вечер\w*", r"ноч\w*", r"недел\w*", r"час\w*",
    r"минут\w*", r"сутк\w*", r"дн(?:я|ей)", r"понедельник\w*", r"вторник\w*", r"сред[уы]",
    r"четверг\w*", r"пятниц\w*", r"суббот\w*", r"воскресень\w*", r"с \d+",
    r"после (?:релиза|деплоя|обновления|выкатки)", r"полдень", r"полночь",
)

# --- decline: change data, run commands, secrets, attacks ---------------------------

INJECTION = re.compile(
    r"\b(?:ignore|disregard|forget|override|bypass)\b.{0,40}\b(?:instructions?|prompts?"
    r"|rules|guidelines|guardrails|restrictions)\b"
    r"|\byou are now\b|\bdeveloper mode\b|\bjailbreak\w*|\bdo anything now\b|\bact as dan\b"
    r"|\b(?:проигнорируй|игнорируй|забудь|отмени|обойди)\w*\b.{0,40}"
    r"(?:инструкц\w*|правил\w*|промп?т\w*|ограничени\w*)"
    r"|\bты теперь\b|\bрежим разработчика\b"
)
SQL_WRITE = re.compile(
    r"\b(?:delete\s+from|drop\s+(?:table|database|schema|index|view|column|user)"
    r"|truncate\s+(?:table\s+)?[\w.]+|update\s+[\w.]+\s+set|insert\s+into|alter\s+table"
    r"|grant\s+\w+\s+on|revoke\s+\w+\s+(?:on|from))\b"
)
#: SQL glued to a value a question names — the classic injection shapes ("10033'; DROP TABLE
#: x;--", "10033\" OR 1=1 --", "10291 UNION SELECT ...", "10291 /* ... */"). The question is
#: still a question: the payload is cut off before the question is read (names are never put
#: into SQL as text).
SQL_PAYLOAD = re.compile(
    r"(?<=\w)\s*(?:['\"`]\s*\)*\s*;\s*(?:drop|delete|update|insert|alter|truncate|grant|revoke"
    r"|create|exec\w*|select|shutdown)\b[^\n]*?(?:--|;\s*$|$)"
    r"|['\"`]?\s+(?:or|and)\s+['\"`]?\w+['\"`]?\s*=\s*['\"`]?\w+['\"`]?\s*(?:--|#|/\*|;|$)"
    r"|['\"`]?\s+union\s+(?:all\s+)?select\b[^\n]*?(?:--|;|$)"
    r"|\s*/\*[^\n]*?\*/)"
)
SHELL = re.compile(
    r"(?:^|[\s`;|&])(?:rm\s+-\w+|sudo\s+\w+|chmod\s+\S+|chown\s+\S+|mkfs\S*|dd\s+if="
    r"|kill\s+-\d+|killall\s+\w+|shutdown\s+-?\w*|reboot\b|systemctl\s+(?:stop|restart|disable)"
    r"|kubectl\s+(?:delete|scale|apply|exec)|docker\s+(?:rm|kill|stop|exec)"
    r"|curl\s+\S+\s*\|\s*(?:ba)?sh|wget\s+\S+\s*\|\s*(?:ba)?sh|:\(\)\s*\{)"
)
CODE_OBJECT = words(  # compounds too: "bash-скрипт", "shell-команда"
    r"commands?", r"scripts?", "shell", "bash", r"terminal", "code", r"programs?",
    r"[\w-]+\.(?:sh|py|ps1|bat|exe|pl|rb)", r"`[^`]+`", r"cron\w*", r"команд\w*", r"скрипт\w*",
    r"код\w*", r"программ\w*", r"консол\w*", r"терминал\w*",
    hyphen_bound=False,
)
#: Verbs that, first in a clause, ask to change something or run something.
CHANGE_VERBS_EN = (
    "delete", "remove", "wipe", "erase", "purge", "truncate", "update", "insert", "alter",
    "modify", "change", "edit", "overwrite", "reset", "restart", "reboot", "shutdown",
    "shut down", "stop", "kill", "disable", "deploy", "rollback", "roll back", "install",
    "uninstall", "grant", "revoke", "chmod", "flush", "scale down", "turn off", "switch off",
    "drop the", "drop all", "clear the", "clean up the", "lock", "block", "unlock",
    "zero out", "blank out", r"set(?! ?-?up\b)", "mark", "rename", "replace", "patch", "backfill",
    "populate", "fill in", "adjust", "tweak", "fudge", "doctor", "smooth out", "hide",
    "fix up", "correct the", "massage", "scale", "resize", "redeploy", "drain", "cordon",
    "evict", "bump",
)
RUN_VERBS_EN = ("run", "execute", "exec", "launch", "start", "invoke", "eval", "ssh")
CHANGE_VERBS_RU = (
    r"удал(?:и|ите|ить)", r"сотр(?:и|ите)|стереть", r"очист(?:и|ите|ить)",
    r"измен(?:и|ите|ить)", r"помен(?:яй|яйте|ять)", r"обнов(?:и|ите|ить)",
    r"замен(?:и|ите|ить)", r"перепиш(?:и|ите)", r"дропн(?:и|ите|уть)", r"снес(?:и|ите|ти)",
    r"грохн(?:и|ите|уть)", r"выключ(?:и|ите|ить)", r"отключ(?:и|ите|ить)",
    r"останов(?:и|ите|ить)", r"перезапуст(?:и|ите|ить)", r"перезагруз(?:и|ите|ить)",
    r"рестартан?(?:и|уть)", r"убе(?:й|йте)|убить", r"задепло(?:й|йте|ить)",
    r"откат(?:и|ите|ить)", r"установ(?:и|ите|ить)", r"отформатиру(?:й|йте)", r"переименуй",
    r"выда(?:й|йте|ть) права", r"почист(?:и|ите|ить)", r"обнул(?:и|ите|ить)",
    r"заблокиру(?:й|йте)", r"блокиру(?:й|йте)", r"разблокиру(?:й|йте)",
    r"выстав(?:ь|ьте|ить)", r"постав(?:ь|ьте)", r"пропиш(?:и|ите)", r"(?:по|от)меть(?:те)?",
    r"запиш(?:и|ите)", r"(?:по|под)прав(?:ь|ьте|ить)", r"скорректиру(?:й|йте)",
    r"подкрут(?:и|ите)", r"подмен(?:и|ите)", r"подгон(?:и|ите)", r"сглад(?:ь|ьте)",
    r"скро(?:й|йте)",
)
RUN_VERBS_RU = (r"выполн(?:и|ите|ить)", r"запуст(?:и|ите|ить)", r"исполн(?:и|ите|ить)")
#: Words that may precede an imperative: "please", "can you", "пожалуйста", "надо".
POLITE_PREFIX = re.compile(
    r"^(?:(?:please|pls|kindly|just|now|then|also|and|so|ok|okay|hey|bot|quickly|go ahead and"
    r"|can you|could you|would you|will you|you must|you should|i want you to|i need you to"
    r"|i want to|i'd like to|we need to|need to|help me|let's|lets|пожалуйста|плиз|просто"
    r"|сейчас|теперь|срочно|быстро|давай|можешь|можете|ты можешь|могли бы вы|мог бы ты"
    r"|надо|нужно|необходимо|помоги|помогите|и|а|потом|затем|еще|бот|лучше|а лучше|забей"
    r"|instead|rather|better|actually|forget it|never ?mind)[\s,]+)+"
)
#: A line pasted from a log, not typed to the bot: it starts with a timestamp or a log
#: level, or holds two key=value fields ("2026-10-27 03:14 ERROR ...", "WARN: ...",
#: "level=error msg=..."). Only a message of several lines has such lines.
LOG_LINE = re.compile(
    r"^\s*\[?(?:\d{4}-\d\d-\d\d|\d\d?:\d\d(?::\d\d)?|\d\d\.\d\d\.\d{2,4}\s+\d\d?:\d\d)"
    r"|^\s*\[?(?:error|err|warn|warning|info|debug|fatal|crit|critical|alarm|panic|severe"
    r"|exception|traceback)\b"
    r"|(?:\b[\w.]+=\S+.*){2}",
    re.IGNORECASE,
)
#: A verb-looking first word used as a noun: "drop in traffic", "restart of the pod".
NOUN_USE = re.compile(
    r"^\S+\s+(?:of|in|on|at|for|from|to|was|is|are|were|has|have|happened|rates?|counts?"
    r"|loops?|storms?|times?|latency|errors?|failures?|failed|requests?|calls?|events?"
    r"|operations?|ops|quer(?:y|ies)|jobs?|spikes?|took|takes|returns?|returned|fails?"
    r"|failing|keeps?|words?|statements?|button|endpoint|handler|logs?|metrics?"
    r"|reasons?|causes?|contention|waits?|holders?|chains?|usage|pressure|growth|leaks?"
    r"|exhaustion|saturation)\b"
)

ATTACK = words(
    r"hack(?:ing)?(?: into| in)? (?:my|his|her|their|the|an?|someone'?s?|somebody'?s?|this"
    r"|that|into)",
    r"break into", r"crack(?:ing)? (?:the |a |his |her |their |my )?\w+", r"ddos[\w-]*",
    r"dos[- ]attack\w*", r"phish[\w-]*", r"scam\w*", r"deceiv\w*", r"trick \w+(?: \w+)? into",
    # CPU steal (the hypervisor's share, node_exporter's mode="steal") is no theft
    r"(?<!cpu )(?<!cpu's )(?<!cpu-)steal(?!(?: time| share| mode| %|%| cpu|\s*\?))\w*",
    r"brute[ -]?forc\w*", r"spoof\w*", r"impersonat\w*", r"malware",
    r"ransomware", r"keylogger\w*", r"botnet\w*", r"(?:write|make|create) (?:a |an )?virus",
    r"lie to", r"manipulate (?:him|her|them|someone|somebody|people|my \w+)", r"doxx?\w*",
    r"fake (?:invoice|login|email|page|site)\w*", r"взлом[\w-]*", r"ддос[\w-]*",
    r"фишинг[\w-]*", r"обман\w*", r"укра[сд]\w*", r"стащ\w*", r"выман\w*", r"выуд\w*",
    r"lure \w+(?: \w+)? into", r"convince \w+(?: \w+)? to (?:give|send|share|tell|transfer)",
    r"брутфорс\w*", r"подоб\w* парол\w*", r"развест\w*", r"мошенн?ич\w*",
    r"(?:напиш\w*|написать|созда\w*|сдела\w*) (?:\w+ )?(?:вирус|троян|кейлоггер|малвар)\w*",
    r"выдать себя за", r"сов(?:ри|рать)", r"налга\w*", r"наврат\w*",
    r"фейков\w* (?:страниц|сайт|письм|аккаунт|счет)\w*",
    # taking someone's systems down: "скрипт, чтобы положить соседнюю сеть", "take down
    # their server" (asking why something went down is no such request: CAUSAL exempts it)
    r"(?:положить|уронить|завалить|вырубить|положи|урони|завали|выруби) (?:\w+ )?"
    r"(?:чуж\w*|сосед\w*|их|его|ее|конкурент\w*) (?:\w+ )?(?:сет[ьи]|сервер\w*|сайт\w*|сервис\w*)",
    r"(?:take|knock) down (?:their|his|her|someone'?s?|somebody'?s?|(?:a |the )?competitors?'?s?"
    r"|other people'?s|the neighbou?r'?s?) (?:\w+ )?(?:network|server|site|website|service)s?",
)
#: Asking how to defend, or reporting being the victim, is not an attack request.
DEFENSIVE = words(
    r"protect\w*", r"defend\w*", r"prevent\w*", r"detect\w*", r"recogni[sz]\w*", r"mitigat\w*",
    r"avoid\w*", r"spot", r"block\w*", r"is (?:this|it|that) (?:a )?(?:scam|phishing)",
    r"(?:were|got|been|was|are|is|under) (?:being )?"
    r"(?:hacked|attacked|phished|ddos\w*|scammed)", r"under (?:a )?(?:d?dos|attack)",
    r"^(?:is|was|are|were|could|can) (?:it|this|that|the|we|there)\b.{0,60}"
    r"(?:d?dos|attack|hack)\w*", r"^(?:это|похоже|не)\b.{0,40}(?:ддос|ddos|атак|взлом)\w*",
    r"защит\w*", r"предотвра\w*", r"распозна\w*", r"обнаруж\w*", r"избеж\w*", r"отлич\w*",
    r"это (?:фишинг|мошенни\w*|развод)", r"нас (?:взломали|атаку\w*|ддос\w*)",
    r"под (?:d?dos|ддос|атак)\w*",
)
# fmt: on
