# One image for web (daphne), worker and beat; docker-compose.yml picks the command.
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 PIP_DISABLE_PIP_VERSION_CHECK=1 DJANGO_DEBUG=0 DJANGO_STATIC_COLLECTED=1
WORKDIR /app

COPY pyproject.toml README.md ./
COPY diego_web ./diego_web
COPY auction ./auction
RUN pip install --no-cache-dir .

COPY . .
RUN DJANGO_SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput

EXPOSE 8000
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "diego_web.asgi:application"]
