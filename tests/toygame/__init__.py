"""A toy game added through the game registry alone (tests/test_toy_game.py): the p-beauty
contest, every file of it in this folder."""
