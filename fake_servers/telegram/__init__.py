"""A fake Telegram Bot API server: the HTTP layer (`server`), the world it keeps and the
rules of each method (`state`), the objects it hands out (`updates`), Telegram's HTML
parse mode (`html`) and how request parameters are read (`params`)."""
