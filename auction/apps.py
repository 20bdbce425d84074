from django.apps import AppConfig


class AuctionConfig(AppConfig):
    name = "auction"
    verbose_name = "Diego cluster"
    default_auto_field = "django.db.models.BigAutoField"
