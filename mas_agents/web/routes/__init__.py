"""The routes of ``mas serve``, one :class:`fastapi.APIRouter` per page family (see
:mod:`mas_agents.web.app` for the pages table); each reaches the app's state through
:func:`mas_agents.web.site.get_site`."""
