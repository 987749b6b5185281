"""User-facing wording of heuristic strategy decisions, in Russian and English.

The LLM path writes its own reasons in the user's language; the heuristic path
(no LLM, or the LLM failed) takes its reasons and clarifying questions from here.
"""

from __future__ import annotations

from typing import Literal

Lang = Literal["ru", "en"]

REASONS: dict[str, dict[Lang, str]] = {
    "social": {
        "en": "Small talk or a question about the bot: a direct answer is enough.",
        "ru": "Приветствие, благодарность или вопрос о боте: достаточно прямого ответа.",
    },
    "definition": {
        "en": "A short factual or how-to question: a direct answer is enough.",
        "ru": "Короткий фактический вопрос или вопрос «как сделать»: достаточно прямого ответа.",
    },
    "plain": {
        "en": "No incident or analysis request recognised: answering directly.",
        "ru": "Не похоже на разбор инцидента или анализ: отвечаю напрямую.",
    },
    "deep": {
        "en": "A diagnostic question that names what to look at ({entities}): "
        "worth a deeper analysis.",
        "ru": "Диагностический вопрос с указанием, что смотреть ({entities}): "
        "нужен глубокий анализ.",
    },
    "clarify": {
        "en": "A diagnostic question that does not say what to look at: "
        "I need a few details first.",
        "ru": "Диагностический вопрос без указания, что именно смотреть: "
        "сначала нужно уточнить детали.",
    },
    "disabled": {
        "en": "The strategy layer is off (STRATEGY_ENABLED=false): answering directly.",
        "ru": "Выбор стратегии отключён (STRATEGY_ENABLED=false): отвечаю напрямую.",
    },
}

DECLINE_REASONS: dict[str, dict[Lang, str]] = {
    "injection": {
        "en": "I can't change my instructions or reveal them. I can answer questions or "
        "investigate an incident, e.g. why traffic dropped on a cell.",
        "ru": "Я не меняю и не раскрываю свои инструкции. Могу ответить на вопрос или "
        "разобрать инцидент, например, почему упал трафик на соте.",
    },
    "change": {
        "en": "I only read data; I can't change or delete anything. I can analyse the "
        "data instead, e.g. explain why a metric changed on a cell or service.",
        "ru": "Я только читаю данные и ничего не меняю и не удаляю. Могу проанализировать "
        "данные, например, объяснить, почему изменилась метрика соты или сервиса.",
    },
    "command": {
        "en": "I don't run commands or scripts. I can investigate an incident with "
        "read-only checks, or explain what a command does.",
        "ru": "Я не выполняю команды и скрипты. Могу разобрать инцидент с помощью проверок "
        "только на чтение или объяснить, что делает команда.",
    },
    "secret": {
        "en": "I don't reveal passwords, tokens, keys, my instructions or other users' "
        "questions, and I don't dump whole tables. Ask your administrator for access; I can "
        "help with questions about the data.",
        "ru": "Я не раскрываю пароли, токены, ключи, свои инструкции и вопросы других "
        "пользователей и не выгружаю таблицы целиком. Доступ выдаёт администратор; я могу "
        "помочь с вопросами о данных.",
    },
    "attack": {
        "en": "I don't help attack, break into or deceive anyone. I can explain how to "
        "protect against such attacks or investigate an incident.",
        "ru": "Я не помогаю взламывать, атаковать или обманывать кого-либо. Могу рассказать, "
        "как защититься от таких атак, или разобрать инцидент.",
    },
}

UNCERTAINTY: dict[Lang, str] = {
    "en": "Chosen by keyword rules, not by a language model.",
    "ru": "Выбрано по ключевым словам, без языковой модели.",
}
WEAK_SIGNAL: dict[Lang, str] = {
    "en": "Chosen by keyword rules; the question matched no clear pattern.",
    "ru": "Выбрано по ключевым словам; вопрос не подошёл ни под один явный шаблон.",
}

WHAT_QUESTION: dict[Lang, str] = {
    "en": "What should I look at?",
    "ru": "Что именно посмотреть?",
}
WHAT_OPTIONS: dict[Lang, list[str]] = {
    "en": ["a cell (send its id)", "a service", "a host", "a metric"],
    "ru": ["сота (её номер)", "сервис", "хост", "метрика"],
}
WHEN_QUESTION: dict[Lang, str] = {
    "en": "For which period?",
    "ru": "За какой период?",
}
WHEN_OPTIONS: dict[Lang, list[str]] = {
    "en": ["the last hour", "since yesterday", "the last 7 days", "since a specific date"],
    "ru": ["за последний час", "со вчерашнего дня", "за последние 7 дней", "с определённой даты"],
}
SYMPTOM_QUESTION: dict[Lang, str] = {
    "en": "What exactly looks wrong?",
    "ru": "Что именно не так?",
}
SYMPTOM_OPTIONS: dict[Lang, list[str]] = {
    "en": ["errors / 5xx", "slow responses", "a traffic drop", "it is unavailable"],
    "ru": ["ошибки / 5xx", "медленные ответы", "падение трафика", "недоступность"],
}

LLM_DEFAULT_REASON: dict[Lang, str] = {
    "en": "Chosen by the language model.",
    "ru": "Выбрано языковой моделью.",
}
LLM_DEFAULT_UNCERTAINTY: dict[Lang, str] = {
    "en": "The language model was not sure which way to handle this question.",
    "ru": "Языковая модель не уверена, как лучше обработать этот вопрос.",
}
LLM_TIMEOUT: dict[Lang, str] = {
    "en": "The language model did not answer in time; chosen by keyword rules.",
    "ru": "Языковая модель не ответила вовремя; выбрано по ключевым словам.",
}
LLM_FAILED: dict[Lang, str] = {
    "en": "The language model gave no usable answer; chosen by keyword rules.",
    "ru": "Языковая модель не дала пригодного ответа; выбрано по ключевым словам.",
}
