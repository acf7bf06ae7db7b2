import { applyDecorators, INestApplicationContext, SetMetadata } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer } from '@nestjs/core';
import { ApiConsumes } from '@nestjs/swagger';

/** Metadata key of {@link MultipartBody} (on a route handler). */
const MULTIPART_BODY = 'glimpse:multipart-body';
/** Metadata key of {@link ParsesOwnBody} (on a controller). */
const OWN_BODY_PARSING = 'glimpse:own-body-parsing';

/**
 * Route decorator: the route takes `multipart/form-data` instead of JSON, so the body-parsing
 * middleware lets a multipart body through and answers a JSON one 415 (CONTRACT.md, "Errors"). Also
 * documents the media type (`@ApiConsumes`). The route's path must be static (no `:param`, no
 * wildcard): {@link bodyParsingRoutesOf} throws at boot otherwise. The route parses the body itself
 * (e.g. `FileInterceptor`).
 */
export function MultipartBody(): MethodDecorator {
  return applyDecorators(SetMetadata(MULTIPART_BODY, true), ApiConsumes('multipart/form-data'));
}

/**
 * Controller decorator: every route under the controller's path reads its own body, with its own
 * limit and error format (the MCP endpoint answers JSON-RPC errors, not envelopes), so the REST
 * body parser passes those requests through unread.
 */
export function ParsesOwnBody(): ClassDecorator {
  return SetMetadata(OWN_BODY_PARSING, true);
}

/** Which request paths the body-parsing middleware treats specially, as the routes declared it. */
export interface BodyParsingRoutes {
  /** Whether `path` (exact, as `req.path`) is a {@link MultipartBody} route. */
  isMultipart(path: string): boolean;
  /** Whether `path` is at or under the path of a {@link ParsesOwnBody} controller. */
  parsesOwnBody(path: string): boolean;
}

/**
 * The {@link BodyParsingRoutes} of an app, read once at boot from its controllers' metadata (so
 * `common/` names no route: the features mark theirs). Paths are the controller's and the handler's
 * `@Controller()` / `@Post()` paths joined, with a leading `/` (the app sets no global prefix).
 * Throws when a {@link MultipartBody} route has a parameter or wildcard in its path.
 */
export function bodyParsingRoutesOf(app: INestApplicationContext): BodyParsingRoutes {
  const multipart = new Set<string>();
  const ownPrefixes: string[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => unknown) | null;
      if (!controller) continue;
      const controllerPaths = pathsOf(Reflect.getMetadata(PATH_METADATA, controller));
      if (Reflect.getMetadata(OWN_BODY_PARSING, controller)) ownPrefixes.push(...controllerPaths.map((p) => joinPath(p)));
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = Object.getOwnPropertyDescriptor(controller.prototype, name)?.value;
        if (typeof handler !== 'function' || !Reflect.getMetadata(MULTIPART_BODY, handler)) continue;
        for (const base of controllerPaths) {
          for (const own of pathsOf(Reflect.getMetadata(PATH_METADATA, handler))) {
            const path = joinPath(base, own);
            if (/[:*?(]/.test(path)) throw new Error(`@MultipartBody() route ${controller.name}.${name} needs a static path, not ${path}`);
            multipart.add(path);
          }
        }
      }
    }
  }
  return {
    isMultipart: (path) => multipart.has(path),
    parsesOwnBody: (path) => ownPrefixes.some((prefix) => path === prefix || path.startsWith(prefix === '/' ? prefix : `${prefix}/`)),
  };
}

/** A `@Controller()` / route path metadata value as a list (absent means the controller's own path). */
function pathsOf(metadata: string | string[] | undefined): string[] {
  if (metadata === undefined) return [''];
  return Array.isArray(metadata) ? metadata : [metadata];
}

/** `/a/b` from path pieces such as `'v1/screenshot'` and `'/upload'` (empty pieces dropped). */
function joinPath(...pieces: string[]): string {
  return (
    '/' +
    pieces
      .flatMap((piece) => piece.split('/'))
      .filter(Boolean)
      .join('/')
  );
}
