// type-graphql reads the Reflect metadata API while its decorators run, even where every type
// is given explicitly; loading the polyfill here, before type-graphql, makes each decorated
// class safe whatever the import order of the program that loads it.
import 'reflect-metadata';

export * from 'type-graphql';
