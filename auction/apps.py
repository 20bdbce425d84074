from django.apps import AppConfig


class AuctionConfig(AppConfig):
    name = "auction"
    verbose_name = "Diego cluster"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.backends.signals import connection_created

        from auction.services.reading_apart import install

        connection_created.connect(install, dispatch_uid="auction.round_writes")
