from django.urls import path

from . import api, ruleviews, turnpages, views

api_patterns = [
    path("check", api.check, name="api-check"),
    path("calls/<str:call_id>/requests", api.post_request, name="api-requests"),
    path("calls/<str:call_id>/events", api.post_events, name="api-events"),
    path("calls/<str:call_id>", api.get_call, name="api-call"),
    path("calls/<str:call_id>/turns/<int:number>/raw", api.get_raw, name="api-raw"),
]

page_patterns = [
    path("", views.home, name="home"),
    path("rules/", ruleviews.rule_list, name="rules"),
    path("rules/<str:code>/", ruleviews.rule_detail, name="rule"),
    path("p/<slug:slug>/", views.call_list, name="calls"),
    path("p/<slug:slug>/keys/", views.project_keys, name="keys"),
    path("p/<slug:slug>/rules/", views.project_rules, name="project-rules"),
    path("p/<slug:slug>/keys/new", views.create_key, name="create-key"),
    path("p/<slug:slug>/keys/<int:key_id>/revoke", views.revoke_key, name="revoke-key"),
    path("p/<slug:slug>/calls/<str:call_id>/", views.call_detail, name="call"),
    path("p/<slug:slug>/templates/", turnpages.project_templates, name="project-templates"),
    path(
        "p/<slug:slug>/templates/<int:template_id>/delete",
        turnpages.delete_template,
        name="delete-template",
    ),
    path("p/<slug:slug>/calls/<str:call_id>/fixture.json", turnpages.call_fixture, name="call-fixture"),
    path("p/<slug:slug>/calls/<str:call_id>/turns/<int:number>/", turnpages.turn_detail, name="turn"),
    path(
        "p/<slug:slug>/calls/<str:call_id>/turns/<int:number>/fixture.json",
        turnpages.turn_fixture,
        name="turn-fixture",
    ),
    path(
        "p/<slug:slug>/calls/<str:call_id>/turns/<int:number>/diff",
        turnpages.turn_diff_fixture,
        name="turn-diff-fixture",
    ),
    path(
        "p/<slug:slug>/calls/<str:call_id>/turns/<int:number>/raw",
        views.turn_raw,
        name="turn-raw",
    ),
]
